// Where each of a rank's tensors lands in memory: one arena per file, laid out before any
// memory is allocated (the arenas' sizes are what the load allocates).
//
// The sharding rules (shard_plan.h) give each tensor's bytes for the rank. A tensor that is one
// contiguous range of its file joins a run: contiguous ranges that touch in the file are
// merged, and a run's region of the arena mirrors its file range from the 4 KiB block boundary
// below it, so a block-aligned read of the file lands block-aligned in the arena (O_DIRECT and
// GDS need that) and the whole run is read with no copy. A column split (one chunk per outer
// index) gets a region of its own, filled by scattering the chunks into place.
//
// Pure: no I/O, no allocation beyond the plan itself; the same headers, rules and rank give the
// same layout. Thread safety: reentrant; layouts are values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/safetensors/dtype.h"
#include "core/safetensors/safetensors_header.h"
#include "node-agent/loader/alignment.h"
#include "node-agent/loader/load_options.h"
#include "node-agent/loader/shard_plan.h"

namespace modelplane::agent {

// Arena regions start on the file's block size so a file range and its place in the arena
// agree modulo the block (needed by O_DIRECT and GDS alike), on the device as on the host.
inline constexpr std::uint64_t kRegionAlignment = kDirectAlignment;

// Contiguous tensors that touch in the file: [begin, end) read straight into place.
struct FileRun {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t region_offset = 0;  // where AlignDown(begin, kRegionAlignment) lands

  // Where byte `file_offset` of the file (at or after the block holding `begin`) lands.
  [[nodiscard]] std::uint64_t ArenaOffset(std::uint64_t file_offset) const {
    return region_offset + (file_offset - AlignDown(begin, kRegionAlignment));
  }
};

// A column split: its chunks are scattered into a region of their own.
struct StridedTensor {
  std::size_t tensor = 0;  // index into ArenaLayout::tensors
  TensorSlice slice;
};

struct PlacedTensor {
  std::string name;
  core::Dtype dtype = core::Dtype::kU8;
  std::vector<std::uint64_t> shape;  // the rank's shape
  std::uint64_t bytes = 0;
  std::uint32_t file = 0;
  std::uint64_t arena_offset = 0;  // 0 for an empty tensor, which has no region
  // Contiguous tensors only: where their bytes begin in the file (a mapped file's tensors are
  // views of the mapping there).
  std::optional<std::uint64_t> file_begin;
};

struct FileArena {
  std::vector<FileRun> runs;  // in file order
  std::vector<StridedTensor> strided;
  std::uint64_t bytes = 0;  // the arena's size
};

struct ArenaLayout {
  std::vector<PlacedTensor> tensors;  // the rank's, files in the order given, each in its order
  std::vector<FileArena> files;       // one per file given
  std::uint64_t bytes_needed = 0;     // bytes of the rank's tensors
};

struct LayoutFile {
  std::string_view path;  // for error messages
  std::span<const core::TensorInfo> tensors;
};

// Errors are PlanTensorSlice's (an impossible split, a rule naming a rank outside the world),
// wrapped with the file's path.
[[nodiscard]] core::Result<ArenaLayout> PlanArenaLayout(std::span<const LayoutFile> files,
                                                        const std::vector<ShardRule>& rules,
                                                        std::uint32_t rank,
                                                        std::uint32_t world_size);

}  // namespace modelplane::agent
