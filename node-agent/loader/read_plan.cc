#include "node-agent/loader/read_plan.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace modelplane::agent {

namespace {

// Builds one file's reads; a class so the options and the plan are not every call's
// parameters.
class FileReadPlanner {
 public:
  FileReadPlanner(std::uint32_t file, const FileReadMode& mode, const ReadPlanOptions& options,
                  ReadPlan& plan)
      : file_(file),
        mode_(mode),
        options_(options),
        alignment_(mode.direct ? kDirectAlignment : 1),
        plan_(plan) {}

  void AddRun(const FileRun& run) {
    const std::uint64_t begin = AlignDown(run.begin, alignment_);
    const std::uint64_t end = AlignUp(run.end, alignment_);
    const std::uint64_t destination = run.ArenaOffset(begin);
    if (mode_.mapped) {
      plan_.mapped.push_back(
          MappedRange{.file = file_, .offset = run.begin, .length = run.end - run.begin});
    } else if (options_.host_destination) {
      AddDirectReads(begin, end, destination, plan_.reads);
    } else if (mode_.gds) {
      AddDirectReads(begin, end, destination, plan_.gds_reads);
    } else {
      AddStagedReads(begin, end, destination);
    }
  }

  // A column split: chunk_count chunks of chunk_bytes, file_stride apart. Large chunks of a
  // buffered file on the CPU are read in place; the rest are coalesced into slot-sized
  // staged reads (gaps up to coalesce_gap_bytes are read and dropped).
  void AddStrided(const TensorSlice& slice, std::uint64_t output) {
    if (options_.host_destination && !mode_.direct && slice.chunk_bytes >= kDirectChunkMinBytes) {
      for (std::uint64_t i = 0; i < slice.chunk_count; ++i) {
        const ByteChunk chunk = slice.Chunk(i);
        AddDirectReads(chunk.file_offset, chunk.file_offset + chunk.length,
                       output + chunk.output_offset, plan_.reads);
      }
      return;
    }
    const std::uint64_t slot_bytes = options_.request_bytes;
    const std::uint64_t part_limit = slot_bytes - kDirectAlignment;
    std::optional<ReadOp> current;
    std::uint64_t current_end = 0;  // end of the last piece in `current`
    auto flush = [&] {
      if (!current) return;
      current->length = AlignUp(current_end, alignment_) - current->offset;
      plan_.reads.push_back(std::move(*current));
      current.reset();
    };
    for (std::uint64_t i = 0; i < slice.chunk_count; ++i) {
      const ByteChunk chunk = slice.Chunk(i);
      for (std::uint64_t done = 0; done < chunk.length; done += part_limit) {
        const std::uint64_t offset = chunk.file_offset + done;
        const std::uint64_t length = std::min(part_limit, chunk.length - done);
        // The gap counts in blocks actually read: chunks sharing a 4 KiB block under O_DIRECT
        // cost nothing extra together, and reading that block once per chunk would.
        if (current && (AlignDown(offset, alignment_) >
                            AlignUp(current_end, alignment_) + options_.coalesce_gap_bytes ||
                        AlignUp(offset + length, alignment_) - current->offset > slot_bytes)) {
          flush();
        }
        if (!current) {
          current = ReadOp{.file = file_, .offset = AlignDown(offset, alignment_), .staged = true};
        }
        current->pieces.push_back(ReadPiece{.slot_offset = offset - current->offset,
                                            .length = length,
                                            .destination = output + chunk.output_offset + done});
        current_end = offset + length;
      }
    }
    flush();
  }

 private:
  // Reads of [begin, end) straight to `destination` onwards, in requests of at most
  // request_bytes.
  void AddDirectReads(std::uint64_t begin, std::uint64_t end, std::uint64_t destination,
                      std::vector<ReadOp>& reads) const {
    for (std::uint64_t at = begin; at < end; at += options_.request_bytes) {
      reads.push_back(ReadOp{.file = file_,
                             .offset = at,
                             .length = std::min<std::uint64_t>(options_.request_bytes, end - at),
                             .destination = destination + (at - begin)});
    }
  }

  // Slot-sized staged reads of [begin, end) whose bytes go, in order, to `destination` onwards.
  void AddStagedReads(std::uint64_t begin, std::uint64_t end, std::uint64_t destination) const {
    for (std::uint64_t at = begin; at < end; at += options_.request_bytes) {
      const std::uint64_t length = std::min<std::uint64_t>(options_.request_bytes, end - at);
      plan_.reads.push_back(ReadOp{
          .file = file_,
          .offset = at,
          .length = length,
          .staged = true,
          .pieces = {ReadPiece{
              .slot_offset = 0, .length = length, .destination = destination + (at - begin)}}});
    }
  }

  const std::uint32_t file_;
  const FileReadMode& mode_;
  const ReadPlanOptions& options_;
  const std::uint64_t alignment_;
  ReadPlan& plan_;
};

}  // namespace

bool ReadPlan::Staged() const {
  return std::any_of(reads.begin(), reads.end(), [](const ReadOp& op) { return op.staged; });
}

ReadPlan PlanReads(const ArenaLayout& layout, std::span<const FileReadMode> modes,
                   const ReadPlanOptions& options) {
  ReadPlan plan;
  for (std::uint32_t f = 0; f < layout.files.size(); ++f) {
    FileReadPlanner planner(f, modes[f], options, plan);
    for (const FileRun& run : layout.files[f].runs) planner.AddRun(run);
    for (const StridedTensor& strided : layout.files[f].strided) {
      planner.AddStrided(strided.slice, layout.tensors[strided.tensor].arena_offset);
    }
  }
  return plan;
}

}  // namespace modelplane::agent
