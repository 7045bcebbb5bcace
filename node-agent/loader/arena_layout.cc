#include "node-agent/loader/arena_layout.h"

namespace modelplane::agent {

namespace {

// A contiguous tensor and the run it joined.
struct RunTensor {
  std::size_t tensor = 0;
  std::size_t run = 0;
  std::uint64_t begin = 0;  // in the file
};

}  // namespace

core::Result<ArenaLayout> PlanArenaLayout(std::span<const LayoutFile> files,
                                          const std::vector<ShardRule>& rules, std::uint32_t rank,
                                          std::uint32_t world_size) {
  ArenaLayout layout;
  layout.files.resize(files.size());
  for (std::uint32_t f = 0; f < files.size(); ++f) {
    FileArena& arena = layout.files[f];
    std::vector<RunTensor> run_tensors;
    for (const core::TensorInfo& info : files[f].tensors) {
      auto planned = PlanTensorSlice(info, rules, rank, world_size);
      if (!planned) return std::unexpected(planned.error().Wrap(files[f].path));
      const std::optional<TensorSlice>& mine = *planned;
      if (!mine) continue;
      const TensorSlice& slice = *mine;
      const std::size_t index = layout.tensors.size();
      layout.tensors.push_back(PlacedTensor{.name = info.name,
                                            .dtype = info.dtype,
                                            .shape = slice.shape,
                                            .bytes = slice.output_bytes,
                                            .file = f});
      layout.bytes_needed += slice.output_bytes;
      if (slice.output_bytes == 0) continue;
      if (slice.Contiguous()) {
        const std::uint64_t begin = slice.first_file_offset;
        const std::uint64_t end = begin + slice.output_bytes;
        if (arena.runs.empty() || arena.runs.back().end != begin) {
          arena.runs.push_back(FileRun{.begin = begin});
        }
        arena.runs.back().end = end;
        layout.tensors[index].file_begin = begin;
        run_tensors.push_back(
            RunTensor{.tensor = index, .run = arena.runs.size() - 1, .begin = begin});
      } else {
        arena.strided.push_back(StridedTensor{.tensor = index, .slice = slice});
      }
    }
    // Runs first, in file order, then one region per strided tensor.
    std::uint64_t cursor = 0;
    for (FileRun& run : arena.runs) {
      run.region_offset = cursor;
      cursor += AlignUp(run.end, kRegionAlignment) - AlignDown(run.begin, kRegionAlignment);
    }
    for (const StridedTensor& strided : arena.strided) {
      layout.tensors[strided.tensor].arena_offset = cursor;
      cursor += AlignUp(strided.slice.output_bytes, kRegionAlignment);
    }
    arena.bytes = cursor;
    // Known once the file's runs have their regions.
    for (const RunTensor& entry : run_tensors) {
      layout.tensors[entry.tensor].arena_offset = arena.runs[entry.run].ArenaOffset(entry.begin);
    }
  }
  return layout;
}

}  // namespace modelplane::agent
