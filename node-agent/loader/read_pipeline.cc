#include "node-agent/loader/read_pipeline.h"

#include <algorithm>
#include <cerrno>
#include <system_error>

#include <fmt/format.h>

namespace modelplane::agent {

using core::ErrorCode;
using core::MakeError;

core::Status ReadPipeline::Submit(const ReadOp& op, InFlight& flight, std::uint64_t tag) {
  const std::uint64_t remaining = op.length - flight.done;
  stats_.CountRequest(remaining);
  auto status = engine_.Submit(ReadRequest{.fd = flight.fd,
                                           .offset = op.offset + flight.done,
                                           .buffer = flight.buffer + flight.done,
                                           .length = static_cast<std::uint32_t>(remaining),
                                           .tag = tag});
  if (!status) return status;
  ++in_flight_;
  stats_.max_in_flight = std::max(stats_.max_in_flight, in_flight_);
  in_flight_sum_ += in_flight_;
  ++submissions_;
  return core::Ok();
}

core::Status ReadPipeline::Run(std::span<const ReadOp> reads, std::uint32_t queue_depth,
                               const std::function<void()>& on_first_read,
                               const std::function<void(std::uint64_t)>& on_progress) {
  std::vector<InFlight> table(queue_depth);
  std::vector<std::uint64_t> free_tags;
  for (std::uint64_t i = queue_depth; i > 0; --i) free_tags.push_back(i - 1);
  std::size_t next = 0;
  bool first = true;
  while (next < reads.size() || in_flight_ > 0) {
    while (in_flight_ < queue_depth && next < reads.size()) {
      const ReadOp& op = reads[next];
      int slot = -1;
      if (op.staged) {
        // With nothing in flight, only a copy can free a slot: wait for the oldest.
        auto acquired = ring_->Acquire(/*wait=*/in_flight_ == 0);
        if (!acquired) return std::unexpected(acquired.error());
        if (*acquired < 0) break;
        slot = *acquired;
      }
      const CheckpointFile& file = files_[op.file];
      const std::uint64_t size = file.size();
      const std::uint64_t tag = free_tags.back();
      free_tags.pop_back();
      table[tag] =
          InFlight{.op = next,
                   .slot = slot,
                   .fd = file.ReadFd(),
                   .buffer = slot >= 0 ? ring_->data(slot) : arenas_[op.file] + op.destination,
                   .expected = std::min(op.offset + op.length, size) - std::min(op.offset, size)};
      if (auto status = Submit(op, table[tag], tag); !status) return status;
      ++next;
    }
    if (in_flight_ == 0) {
      return MakeError(ErrorCode::kInternal, "loader pipeline stalled with no read in flight");
    }
    auto completion = engine_.WaitOne();
    if (!completion) return std::unexpected(completion.error());
    --in_flight_;
    if (first) {
      if (on_first_read) on_first_read();
      first = false;
    }
    InFlight& flight = table[completion->tag];
    const ReadOp& op = reads[flight.op];
    CheckpointFile& file = files_[op.file];
    if (completion->result == -EINVAL && file.direct() && flight.fd == file.direct_fd()) {
      // The filesystem took O_DIRECT at open but refuses the reads: the same (aligned)
      // request through the page cache reads the same bytes into the same place.
      file.RefuseDirect();
      stats_.fallbacks.push_back(
          fmt::format("{}: O_DIRECT read refused, reading through the page cache", file.path()));
    }
    if (completion->result == -EINVAL && flight.fd == file.direct_fd() && !file.direct()) {
      flight.fd = file.fd();
      if (auto status = Submit(op, flight, completion->tag); !status) return status;
      continue;
    }
    if (completion->result < 0) {
      return MakeError(
          ErrorCode::kIo,
          fmt::format("reading {} at {}: {}", file.path(), op.offset + flight.done,
                      std::system_category().message(static_cast<int>(-completion->result))));
    }
    const auto got = static_cast<std::uint64_t>(completion->result);
    stats_.bytes_read += got;
    flight.done += got;
    if (got == 0 && flight.done < flight.expected) {
      return MakeError(ErrorCode::kDataLoss,
                       fmt::format("{} ended at byte {} during the load; its header says {}",
                                   file.path(), op.offset + flight.done, file.size()));
    }
    if (flight.done < flight.expected) {
      if (auto status = Submit(op, flight, completion->tag); !status) return status;
      continue;
    }
    if (flight.slot >= 0) {
      if (auto status = ring_->Deliver(flight.slot, op.pieces, arenas_[op.file]); !status) {
        return status;
      }
    }
    free_tags.push_back(completion->tag);
    if (on_progress) on_progress(stats_.bytes_read);
  }
  stats_.mean_in_flight =
      submissions_ == 0 ? 0
                        : static_cast<double>(in_flight_sum_) / static_cast<double>(submissions_);
  return core::Ok();
}

}  // namespace modelplane::agent
