#include "node-agent/loader/staging_ring.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace modelplane::agent {

core::Result<std::unique_ptr<StagingRing>> StagingRing::Create(const Options& options,
                                                               const CudaRuntime* cuda,
                                                               LoadStats& stats) {
  // The constructor is private: make_unique cannot reach it.
  std::unique_ptr<StagingRing> ring(new StagingRing(cuda));
  const auto slots = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(2, options.ring_bytes / options.slot_bytes));
  auto memory = HostMapping::Allocate(std::uint64_t{slots} * options.slot_bytes);
  if (!memory) return std::unexpected(memory.error());
  ring->memory_ = std::move(*memory);
  stats.ring_bytes = ring->memory_.bytes();
  stats.ring_slots = slots;
  ring->slots_.assign(slots, Slot{});
  for (std::uint32_t i = 0; i < slots; ++i) {
    ring->slots_[i].data = ring->memory_.data() + i * options.slot_bytes;
  }
  if (cuda == nullptr) {
    stats.host_staging_bytes += ring->memory_.bytes();
    return ring;
  }
  auto pinned = PinnedRegistration::Register(*cuda, ring->memory_.data(), ring->memory_.bytes());
  if (!pinned) {
    stats.fallbacks.push_back(
        fmt::format("{}; copying from pageable memory", pinned.error().message()));
    stats.host_staging_bytes += ring->memory_.bytes();
  } else {
    ring->pinned_ = std::move(*pinned);
    stats.host_pinned_bytes = ring->memory_.bytes();
  }
  // On failure the ring's destructor destroys what was created.
  if (auto status = ring->CreateStreamsAndEvents(options.cuda_streams); !status) {
    return std::unexpected(status.error());
  }
  return ring;
}

core::Status StagingRing::CreateStreamsAndEvents(std::uint32_t streams) {
  streams_.resize(streams);
  for (CudaStream& stream : streams_) {
    if (auto status =
            cuda_->Check(cuda_->api().StreamCreateWithFlags(&stream, kCudaStreamNonBlocking),
                         "cudaStreamCreateWithFlags");
        !status) {
      return status;
    }
  }
  for (Slot& slot : slots_) {
    if (auto status =
            cuda_->Check(cuda_->api().EventCreateWithFlags(&slot.event, kCudaEventDisableTiming),
                         "cudaEventCreateWithFlags");
        !status) {
      return status;
    }
  }
  return core::Ok();
}

StagingRing::~StagingRing() {
  if (cuda_ == nullptr) return;
  for (Slot& slot : slots_) {
    if (slot.event != nullptr) cuda_->api().EventDestroy(slot.event);
  }
  for (CudaStream stream : streams_) {
    if (stream != nullptr) cuda_->api().StreamDestroy(stream);
  }
}

core::Result<int> StagingRing::Acquire(bool wait) {
  auto take = [this](std::size_t index) {
    slots_[index].state = SlotState::kReading;
    return static_cast<int>(index);
  };
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].state == SlotState::kFree) return take(i);
  }
  int oldest = -1;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (slot.state != SlotState::kCopying) continue;
    const int query = cuda_->api().EventQuery(slot.event);
    if (query == kCudaSuccess) return take(i);
    if (query != kCudaErrorNotReady) {
      return std::unexpected(cuda_->Check(query, "cudaEventQuery").error());
    }
    if (oldest < 0 || slot.sequence < slots_[oldest].sequence) oldest = static_cast<int>(i);
  }
  if (!wait || oldest < 0) return -1;
  if (auto status =
          cuda_->Check(cuda_->api().EventSynchronize(slots_[oldest].event), "cudaEventSynchronize");
      !status) {
    return std::unexpected(status.error());
  }
  return take(static_cast<std::size_t>(oldest));
}

core::Status StagingRing::Deliver(int slot_index, std::span<const ReadPiece> pieces,
                                  std::byte* arena) {
  Slot& slot = slots_[slot_index];
  if (cuda_ == nullptr) {
    if (arena != nullptr) {
      for (const ReadPiece& piece : pieces) {
        std::memcpy(arena + piece.destination, slot.data + piece.slot_offset, piece.length);
      }
    }
    slot.state = SlotState::kFree;
    return core::Ok();
  }
  CudaStream stream = streams_[next_stream_];
  next_stream_ = (next_stream_ + 1) % streams_.size();
  for (const ReadPiece& piece : pieces) {
    if (auto status = cuda_->Check(
            cuda_->api().MemcpyAsync(arena + piece.destination, slot.data + piece.slot_offset,
                                     piece.length, kCudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync");
        !status) {
      return status;
    }
  }
  if (auto status = cuda_->Check(cuda_->api().EventRecord(slot.event, stream), "cudaEventRecord");
      !status) {
    return status;
  }
  slot.state = SlotState::kCopying;
  slot.sequence = ++sequence_;
  return core::Ok();
}

core::Status StagingRing::Synchronize() {
  for (CudaStream stream : streams_) {
    if (auto status = cuda_->Check(cuda_->api().StreamSynchronize(stream), "cudaStreamSynchronize");
        !status) {
      return status;
    }
  }
  return core::Ok();
}

}  // namespace modelplane::agent
