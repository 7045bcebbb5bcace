// The shards a safetensors index (model.safetensors.index.json) names, and whether a file set
// holds all of them: a revision whose index points at a shard it does not carry (another
// quantization's, or one left out by a filter) loads nowhere, so writers refuse it up front.
//
// The index is {"metadata": {...}, "weight_map": {"<tensor>": "<shard file>", ...}}; shard names
// are relative to the index's own folder. Callers word the refusal (they know why a shard is
// missing: filtered out, or never there).
// Thread safety: pure functions.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"

namespace modelplane::core {

// True for the index files this check reads ("*.safetensors.index.json").
[[nodiscard]] bool IsSafetensorsIndex(std::string_view path);

// The shard paths the index at `index_path` names, relative to the file set's root;
// kInvalidArgument when `text` is not such an index. The caller bounds how much it reads.
[[nodiscard]] Result<std::set<std::string>> ShardsNamedByIndex(std::string_view index_path,
                                                               std::string_view text);

// The shards the index names that `paths` lacks, sorted; empty when it holds them all.
[[nodiscard]] Result<std::vector<std::string>> ShardsMissingFrom(
    std::string_view index_path, std::string_view text, const std::set<std::string>& paths);

}  // namespace modelplane::core
