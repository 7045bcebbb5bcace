// Runs a plan's reads (read_plan.h) through a ReadEngine: keeps up to queue_depth reads in
// flight, in plan order, each straight to its place in the file's arena or into a slot of the
// staging ring, which is delivered when its read completes. A staged read waits for a free
// slot, so the ring bounds what is in flight as much as the queue depth does.
//
// Short reads are resubmitted for the rest; a read that returns nothing before the bytes the
// file should hold is kDataLoss (the file shrank). A file whose O_DIRECT reads are refused
// (EINVAL from a filesystem that took O_DIRECT at open) is read through the page cache from
// then on, the same aligned request into the same place, and the fallback is recorded.
//
// Thread safety: Run is called once, on the thread that owns the engine and the ring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/error/error.h"
#include "node-agent/loader/checkpoint_file.h"
#include "node-agent/loader/load_stats.h"
#include "node-agent/loader/read_engine.h"
#include "node-agent/loader/read_plan.h"
#include "node-agent/loader/staging_ring.h"

namespace modelplane::agent {

class ReadPipeline {
 public:
  // `ring` may be null when no read is staged; `arenas` has one entry per file (nullptr: the
  // file's staged bytes are dropped). Counts requests, bytes read and reads in flight into
  // `stats`.
  ReadPipeline(ReadEngine& engine, StagingRing* ring, std::span<CheckpointFile> files,
               std::span<std::byte* const> arenas, LoadStats& stats)
      : engine_(engine), ring_(ring), files_(files), arenas_(arenas), stats_(stats) {}
  ReadPipeline(const ReadPipeline&) = delete;
  ReadPipeline& operator=(const ReadPipeline&) = delete;

  // `on_first_read` runs when the first read completes, `on_progress` (LoadOptions') after
  // each; either may be empty.
  [[nodiscard]] core::Status Run(std::span<const ReadOp> reads, std::uint32_t queue_depth,
                                 const std::function<void()>& on_first_read,
                                 const std::function<void(std::uint64_t)>& on_progress);

 private:
  struct InFlight {
    std::size_t op = 0;
    int slot = -1;
    int fd = -1;
    std::byte* buffer = nullptr;
    std::uint64_t done = 0;
    std::uint64_t expected = 0;  // the op's bytes that lie inside the file
  };

  [[nodiscard]] core::Status Submit(const ReadOp& op, InFlight& flight, std::uint64_t tag);

  ReadEngine& engine_;
  StagingRing* ring_;
  std::span<CheckpointFile> files_;
  std::span<std::byte* const> arenas_;
  LoadStats& stats_;
  std::uint32_t in_flight_ = 0;
  std::uint64_t in_flight_sum_ = 0;
  std::uint64_t submissions_ = 0;
};

}  // namespace modelplane::agent
