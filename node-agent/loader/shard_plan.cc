#include "node-agent/loader/shard_plan.h"

#include <charconv>

#include <fmt/format.h>
#include <fnmatch.h>

namespace modelplane::agent {
namespace {

using core::ErrorCode;
using core::MakeError;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

std::optional<std::uint32_t> ParseNumber(std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

core::Result<std::vector<ShardRule>> ParseShardRules(std::string_view text) {
  std::vector<ShardRule> rules;
  while (!text.empty()) {
    const std::size_t end = text.find_first_of(";\n");
    const std::string_view entry = Trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (entry.empty()) continue;
    const std::size_t equals = entry.rfind('=');
    if (equals == std::string_view::npos || equals == 0) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("sharding rule '{}' is not PATTERN=ACTION", entry));
    }
    ShardRule rule{.pattern = std::string(Trim(entry.substr(0, equals)))};
    const std::string_view action = Trim(entry.substr(equals + 1));
    if (action == "replicate") {
      rule.kind = ShardRule::Kind::kReplicate;
    } else if (action.starts_with("split:")) {
      const auto dim = ParseNumber(action.substr(6));
      if (!dim) {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("sharding rule '{}': split needs a dimension", entry));
      }
      rule.kind = ShardRule::Kind::kSplit;
      rule.dim = *dim;
    } else if (action.starts_with("rank:")) {
      const auto rank = ParseNumber(action.substr(5));
      if (!rank) {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("sharding rule '{}': rank needs a number", entry));
      }
      rule.kind = ShardRule::Kind::kWholeToRank;
      rule.rank = *rank;
    } else {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("sharding rule '{}': action is not split:DIM, rank:R or "
                                   "replicate",
                                   entry));
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

const ShardRule* MatchShardRule(std::string_view name, const std::vector<ShardRule>& rules) {
  const std::string name_text(name);
  for (const ShardRule& rule : rules) {
    if (::fnmatch(rule.pattern.c_str(), name_text.c_str(), 0) == 0) return &rule;
  }
  return nullptr;
}

core::Result<std::optional<TensorSlice>> PlanTensorSlice(const core::TensorInfo& tensor,
                                                         const std::vector<ShardRule>& rules,
                                                         std::uint32_t rank,
                                                         std::uint32_t world_size) {
  if (world_size == 0 || rank >= world_size) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("rank {} is outside world size {}", rank, world_size));
  }
  TensorSlice whole{.shape = tensor.shape,
                    .output_bytes = tensor.ByteSize(),
                    .chunk_count = 1,
                    .chunk_bytes = tensor.ByteSize(),
                    .first_file_offset = tensor.data_begin,
                    .file_stride = tensor.ByteSize()};
  const ShardRule* rule = MatchShardRule(tensor.name, rules);
  if (rule == nullptr || rule->kind == ShardRule::Kind::kReplicate || world_size == 1) {
    if (rule != nullptr && rule->kind == ShardRule::Kind::kWholeToRank &&
        rule->rank >= world_size) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("rule '{}' gives tensor {} to rank {} of world size {}",
                                   rule->pattern, tensor.name, rule->rank, world_size));
    }
    return whole;
  }
  if (rule->kind == ShardRule::Kind::kWholeToRank) {
    if (rule->rank >= world_size) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("rule '{}' gives tensor {} to rank {} of world size {}",
                                   rule->pattern, tensor.name, rule->rank, world_size));
    }
    if (rule->rank != rank) return std::optional<TensorSlice>();
    return whole;
  }
  if (rule->dim >= tensor.shape.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("rule '{}' splits tensor {} on dimension {} but it has {}",
                                 rule->pattern, tensor.name, rule->dim, tensor.shape.size()));
  }
  const std::uint64_t extent = tensor.shape[rule->dim];
  if (extent % world_size != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("rule '{}': dimension {} of tensor {} has {} entries, not "
                                 "divisible by world size {}",
                                 rule->pattern, rule->dim, tensor.name, extent, world_size));
  }
  // outer: product of the dimensions before the split one; inner_bits: one index of the split
  // dimension. The shape was checked for overflow by the header parser.
  std::uint64_t outer = 1;
  for (std::uint32_t i = 0; i < rule->dim; ++i) outer *= tensor.shape[i];
  std::uint64_t inner_bits = core::DtypeBits(tensor.dtype);
  for (std::size_t i = rule->dim + 1; i < tensor.shape.size(); ++i) inner_bits *= tensor.shape[i];
  const std::uint64_t part = extent / world_size;
  if ((part * inner_bits) % 8 != 0) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("rule '{}': a part of tensor {} along dimension {} is not a "
                    "whole number of bytes of {}",
                    rule->pattern, tensor.name, rule->dim, core::DtypeName(tensor.dtype)));
  }
  TensorSlice slice;
  slice.shape = tensor.shape;
  slice.shape[rule->dim] = part;
  slice.chunk_bytes = part * inner_bits / 8;
  slice.file_stride = extent * inner_bits / 8;
  slice.chunk_count = slice.chunk_bytes == 0 ? 0 : outer;
  slice.first_file_offset = tensor.data_begin + rank * slice.chunk_bytes;
  slice.output_bytes = slice.chunk_count * slice.chunk_bytes;
  // A split whose chunks touch end to end (every dimension before the split one is 1) is one
  // contiguous range: describe it as one chunk.
  if (slice.chunk_count > 1 && slice.file_stride == slice.chunk_bytes) {
    slice.chunk_bytes = slice.output_bytes;
    slice.chunk_count = 1;
  }
  if (slice.chunk_count == 1) slice.file_stride = slice.chunk_bytes;
  return std::optional<TensorSlice>(std::move(slice));
}

}  // namespace modelplane::agent
