// Which files a checkpoint path names: a .safetensors file itself; a folder's
// model.safetensors.index.json (the shards its weight_map names) or, without one, every
// *.safetensors in it, sorted; or an index file given directly. Shard names that leave the
// index's folder are refused.
//
// Thread safety: reentrant; reads the filesystem only.
#pragma once

#include <string>
#include <vector>

#include "core/error/error.h"

namespace modelplane::agent {

// Expands a checkpoint path: a .safetensors file; a directory (its *.safetensors, sorted); or
// a model.safetensors.index.json (the shards its weight_map names).
[[nodiscard]] core::Result<std::vector<std::string>> ResolveCheckpointFiles(
    const std::string& path);

}  // namespace modelplane::agent
