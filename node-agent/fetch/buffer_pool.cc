#include "node-agent/fetch/buffer_pool.h"

#include <cstdlib>
#include <utility>

#include <fmt/format.h>
#include <sys/mman.h>

namespace modelplane::agent {
namespace {
constexpr std::size_t kAlignment = 4096;
constexpr std::size_t kHugePage = 2 << 20;
}  // namespace

BufferLease::BufferLease(BufferLease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      capacity_(std::exchange(other.capacity_, 0)) {}

BufferLease& BufferLease::operator=(BufferLease&& other) noexcept {
  if (this != &other) {
    Return();
    pool_ = std::exchange(other.pool_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

BufferLease::~BufferLease() {
  Return();
}

void BufferLease::Return() {
  if (pool_ != nullptr) pool_->Put(data_);
  pool_ = nullptr;
  data_ = nullptr;
  capacity_ = 0;
}

void BufferPool::FreeDeleter::operator()(std::byte* memory) const {
  std::free(memory);
}

core::Result<std::unique_ptr<BufferPool>> BufferPool::Create(std::size_t buffer_size,
                                                             std::size_t count) {
  if (buffer_size == 0 || count == 0) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "a buffer pool needs at least one buffer of at least one byte");
  }
  buffer_size = (buffer_size + kAlignment - 1) / kAlignment * kAlignment;
  std::vector<std::unique_ptr<std::byte, FreeDeleter>> storage;
  storage.reserve(count);
  // Buffers of 2 MiB or more start on a 2 MiB boundary and ask for transparent huge pages:
  // a new process faults in its pool once, and 256 MiB took 0.10-0.12 s of system time in
  // 4 KiB pages against 0.01-0.03 s in 2 MiB ones (the benchmark VM, docs/benchmarks.md), a
  // fixed cost of every `fetch` command. Without huge pages (THP off, no free 2 MiB page) the
  // kernel falls back to 4 KiB pages.
  const std::size_t alignment = buffer_size >= kHugePage ? kHugePage : kAlignment;
  for (std::size_t index = 0; index < count; ++index) {
    void* memory = nullptr;
    if (::posix_memalign(&memory, alignment, buffer_size) != 0) memory = nullptr;
    if (memory != nullptr && alignment == kHugePage) {
      (void)::madvise(memory, buffer_size / kHugePage * kHugePage, MADV_HUGEPAGE);
    }
    if (memory == nullptr) {
      return core::MakeError(
          core::ErrorCode::kResourceExhausted,
          fmt::format("cannot allocate {} buffers of {} bytes", count, buffer_size));
    }
    storage.emplace_back(static_cast<std::byte*>(memory));
  }
  return std::unique_ptr<BufferPool>(new BufferPool(buffer_size, std::move(storage)));
}

BufferPool::BufferPool(std::size_t buffer_size,
                       std::vector<std::unique_ptr<std::byte, FreeDeleter>> storage)
    : buffer_size_(buffer_size), storage_(std::move(storage)) {
  for (auto& buffer : storage_) free_.push_back(buffer.get());
}

BufferPool::~BufferPool() = default;

BufferLease BufferPool::TakeLocked() {
  std::byte* data = free_.back();
  free_.pop_back();
  high_water_ = std::max(high_water_, storage_.size() - free_.size());
  return BufferLease(this, data, buffer_size_);
}

core::Result<BufferLease> BufferPool::Acquire(core::CancellationToken& cancel) {
  // Declared before the lock so it is unregistered after the lock is released: the callback
  // takes the mutex, which is also why a cancel cannot slip between the check and the wait.
  core::ScopedCancellationCallback wake(cancel, [this] {
    std::lock_guard guard(mutex_);
    available_.notify_all();
  });
  std::unique_lock lock(mutex_);
  available_.wait(lock, [&] { return !free_.empty() || cancel.cancelled(); });
  if (free_.empty())
    return core::MakeError(core::ErrorCode::kCancelled, "stopped waiting for a buffer");
  return TakeLocked();
}

std::optional<BufferLease> BufferPool::TryAcquire() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) return std::nullopt;
  return TakeLocked();
}

void BufferPool::Put(std::byte* data) {
  {
    std::lock_guard lock(mutex_);
    free_.push_back(data);
  }
  available_.notify_one();
}

BufferPoolStats BufferPool::Stats() const {
  std::lock_guard lock(mutex_);
  return {.buffers = storage_.size(),
          .buffer_size = buffer_size_,
          .in_use = storage_.size() - free_.size(),
          .high_water = high_water_};
}

}  // namespace modelplane::agent
