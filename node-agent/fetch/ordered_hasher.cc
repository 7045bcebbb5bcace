#include "node-agent/fetch/ordered_hasher.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace modelplane::agent {
namespace {

constexpr std::size_t kReadBackChunk = 1 << 20;
constexpr std::size_t kNoRange = std::numeric_limits<std::size_t>::max();

}  // namespace

std::uint32_t OrderedHasher::Restart(PartialBlob& partial) {
  std::lock_guard lock(mutex_);
  partial_ = &partial;
  sha256_.emplace(*core::Sha256::Create());
  next_ = 0;
  parked_.clear();  // nothing of the discarded generation may reach the new hash
  complete_ = false;
  return ++generation_;
}

std::size_t OrderedHasher::parked() const {
  std::lock_guard lock(mutex_);
  return parked_.size();
}

std::uint32_t OrderedHasher::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

OrderedHasher::Outcome OrderedHasher::CatchUp(std::uint32_t generation) {
  return Land(generation, kNoRange, BufferLease());
}

OrderedHasher::Outcome OrderedHasher::Land(std::uint32_t generation, std::size_t index,
                                           BufferLease lease) {
  std::unique_lock lock(mutex_);
  if (complete_ || generation != generation_ || partial_ == nullptr) return {};
  if (lease.valid() && index >= next_) parked_.emplace(index, std::move(lease));
  if (hashing_) return {};  // the thread hashing now will reach this range
  hashing_ = true;
  const std::size_t count = partial_->range_count();
  while (next_ < count) {
    const std::size_t next = next_;
    BufferLease buffer;
    if (auto parked = parked_.find(next); parked != parked_.end()) {
      buffer = std::move(parked->second);
      parked_.erase(parked);
    } else if (!partial_->IsRangeDone(next)) {
      break;
    }
    lock.unlock();
    core::Status hashed = HashRange(next, buffer);
    buffer.Return();
    lock.lock();
    if (!hashed) {
      hashing_ = false;
      return {.status = hashed};
    }
    // While this range was read back from disk, its worker may have landed it too (a worker
    // marks a range done on disk before it hands the buffer over): that copy is hashed already.
    parked_.erase(next);
    ++next_;
    lock.unlock();
    if (progress_) progress_(next + 1);
    lock.lock();
    if (generation != generation_) {  // restarted while the lock was free
      hashing_ = false;
      return {};
    }
  }
  hashing_ = false;
  complete_ = next_ == count;
  return {.complete = complete_};
}

core::Status OrderedHasher::HashRange(std::size_t index, const BufferLease& buffer) {
  const std::uint64_t length = partial_->RangeLength(index);
  if (buffer.valid()) {
    sha256_->Update(buffer.bytes().first(static_cast<std::size_t>(length)));
    return core::Ok();
  }
  const std::uint64_t offset = partial_->RangeOffset(index);
  std::vector<std::byte> scratch(
      static_cast<std::size_t>(std::min<std::uint64_t>(kReadBackChunk, length)));
  for (std::uint64_t done = 0; done < length;) {
    const std::size_t chunk =
        static_cast<std::size_t>(std::min<std::uint64_t>(scratch.size(), length - done));
    if (auto read = partial_->ReadBack(offset + done, std::span(scratch).first(chunk)); !read) {
      return read;
    }
    sha256_->Update(std::span<const std::byte>(scratch).first(chunk));
    done += chunk;
  }
  return core::Ok();
}

core::Sha256Bytes OrderedHasher::TakeDigest() {
  std::lock_guard lock(mutex_);
  return sha256_->Finish();
}

}  // namespace modelplane::agent
