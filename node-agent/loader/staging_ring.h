// The bounded ring of host buffers that staged reads land in (read_plan.h): slots of
// request_bytes, never sized by the model. Each slot cycles free -> reading -> delivered.
//
// For a CUDA load the ring is pinned with cudaHostRegister (pageable memory when pinning
// fails, a fallback) and a filled slot is copied with cudaMemcpyAsync on the next of
// `cuda_streams` streams, round robin, while the next reads run; an event recorded after the
// copies frees the slot when it completes. Acquire takes a never-used slot first, then any
// whose copy finished, and, asked to wait, blocks on the oldest copy. Without CUDA (a column
// split on the CPU, device none) a slot's pieces are copied into host memory, or dropped when
// there is no arena, and the slot is free again at once.
//
// Thread safety: one thread acquires, delivers and synchronizes; the ring is not shared.
// Destruction destroys the events and streams, unpins, then unmaps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/error/error.h"
#include "node-agent/loader/cuda_runtime.h"
#include "node-agent/loader/host_memory.h"
#include "node-agent/loader/load_stats.h"
#include "node-agent/loader/read_plan.h"

namespace modelplane::agent {

class StagingRing {
 public:
  struct Options {
    std::uint64_t slot_bytes = kDefaultRequestBytes;
    std::uint64_t ring_bytes = 0;  // rounded down to whole slots, at least two
    std::uint32_t cuda_streams = 2;
  };

  // `cuda` null: slots are delivered into host memory. Records the ring's size, whether it is
  // pinned and the host memory it holds in `stats` (and a fallback when pinning fails).
  [[nodiscard]] static core::Result<std::unique_ptr<StagingRing>> Create(const Options& options,
                                                                         const CudaRuntime* cuda,
                                                                         LoadStats& stats);
  ~StagingRing();
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // A slot to read into, marked reading; -1 when none is free and `wait` is false.
  [[nodiscard]] core::Result<int> Acquire(bool wait);
  [[nodiscard]] std::byte* data(int slot) const { return slots_[slot].data; }
  // Sends a filled slot's pieces to their places in `arena` (nullptr: drops them).
  [[nodiscard]] core::Status Deliver(int slot, std::span<const ReadPiece> pieces, std::byte* arena);
  // Waits for every copy delivered so far.
  [[nodiscard]] core::Status Synchronize();

 private:
  enum class SlotState { kFree, kReading, kCopying };
  struct Slot {
    std::byte* data = nullptr;
    CudaEvent event = nullptr;
    SlotState state = SlotState::kFree;
    std::uint64_t sequence = 0;  // order of delivery: the oldest copy is waited on first
  };

  explicit StagingRing(const CudaRuntime* cuda) : cuda_(cuda) {}
  [[nodiscard]] core::Status CreateStreamsAndEvents(std::uint32_t streams);

  const CudaRuntime* cuda_;
  HostMapping memory_;  // destroyed last: unpinned before it is unmapped
  PinnedRegistration pinned_;
  std::vector<Slot> slots_;
  std::vector<CudaStream> streams_;
  std::size_t next_stream_ = 0;
  std::uint64_t sequence_ = 0;
};

}  // namespace modelplane::agent
