// Which bytes of a tensor one tensor-parallel rank needs, from sharding rules by tensor name.
//
// A rule matches tensor names with a shell glob (fnmatch: `*`, `?`, `[...]`) and says one of:
// split the tensor into `world_size` equal parts along a dimension (the rank keeps part
// `rank`), give the whole tensor to one rank, or replicate it to every rank. The first matching
// rule wins; a tensor no rule matches is replicated. A rank's part of a split is a set of
// equally long chunks of the file, one per index of the dimensions before the split one, so a
// split on dimension 0 is one contiguous range and a rank never reads another rank's bytes.
//
// Thread safety: the functions are reentrant; plans are values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/safetensors/safetensors_header.h"

namespace modelplane::agent {

struct ShardRule {
  enum class Kind { kReplicate, kSplit, kWholeToRank };
  std::string pattern;
  Kind kind = Kind::kReplicate;
  std::uint32_t dim = 0;   // kSplit: the dimension split into world_size parts
  std::uint32_t rank = 0;  // kWholeToRank: the rank that gets the tensor

  friend bool operator==(const ShardRule&, const ShardRule&) = default;
};

// Parses rules written one per entry as "PATTERN=split:DIM", "PATTERN=rank:R" or
// "PATTERN=replicate", entries separated by ';' or newlines (the CLI's and the C ABI's form).
[[nodiscard]] core::Result<std::vector<ShardRule>> ParseShardRules(std::string_view text);

// One contiguous run of bytes a rank needs: `length` bytes at absolute file offset
// `file_offset`, landing at `output_offset` in the rank's (contiguous, row-major) tensor.
struct ByteChunk {
  std::uint64_t file_offset = 0;
  std::uint64_t length = 0;
  std::uint64_t output_offset = 0;
};

// A rank's part of one tensor. The chunks are described arithmetically (count, first offset,
// stride) rather than listed, so a column split of a large matrix costs no memory to plan.
struct TensorSlice {
  std::vector<std::uint64_t> shape;  // the rank's shape
  std::uint64_t output_bytes = 0;    // chunk_count * chunk_bytes
  std::uint64_t chunk_count = 0;
  std::uint64_t chunk_bytes = 0;
  std::uint64_t first_file_offset = 0;
  std::uint64_t file_stride = 0;  // distance between consecutive chunks in the file

  [[nodiscard]] bool Contiguous() const { return chunk_count <= 1; }
  [[nodiscard]] ByteChunk Chunk(std::uint64_t index) const {
    return ByteChunk{.file_offset = first_file_offset + index * file_stride,
                     .length = chunk_bytes,
                     .output_offset = index * chunk_bytes};
  }
};

// The first rule whose pattern matches `name`, or nullptr.
[[nodiscard]] const ShardRule* MatchShardRule(std::string_view name,
                                              const std::vector<ShardRule>& rules);

// The rank's slice of `tensor`; std::nullopt when the tensor goes wholly to another rank.
// Errors: rank outside [0, world_size), a split dimension the tensor lacks, a dimension not
// divisible by world_size, or a split that would cut a byte of a sub-byte dtype.
[[nodiscard]] core::Result<std::optional<TensorSlice>> PlanTensorSlice(
    const core::TensorInfo& tensor, const std::vector<ShardRule>& rules, std::uint32_t rank,
    std::uint32_t world_size);

}  // namespace modelplane::agent
