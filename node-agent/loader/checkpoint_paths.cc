#include "node-agent/loader/checkpoint_paths.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/io/bounded_file.h"
#include "core/json/json_document.h"

namespace modelplane::agent {

using core::ErrorCode;
using core::MakeError;

namespace {
// An index names each tensor once: tens of thousands of entries, a few MiB at most.
constexpr std::size_t kMaxIndexBytes = 64 * 1024 * 1024;
}  // namespace

core::Result<std::vector<std::string>> ResolveCheckpointFiles(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path given(path);
  fs::path index;
  if (fs::is_directory(given, error)) {
    if (fs::exists(given / "model.safetensors.index.json", error)) {
      index = given / "model.safetensors.index.json";
    } else {
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(given, error)) {
        if (entry.path().extension() == ".safetensors" && entry.is_regular_file(error)) {
          files.push_back(entry.path().string());
        }
      }
      if (error) {
        return MakeError(ErrorCode::kIo, fmt::format("listing {}: {}", path, error.message()));
      }
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        return MakeError(ErrorCode::kNotFound, fmt::format("no .safetensors file in {}", path));
      }
      return files;
    }
  } else if (path.ends_with(".json")) {
    index = given;
  } else {
    if (!fs::exists(given, error)) {
      return MakeError(ErrorCode::kNotFound, fmt::format("{} does not exist", path));
    }
    return std::vector<std::string>{path};
  }
  auto text = core::ReadBoundedFile(index.string(), kMaxIndexBytes);
  if (!text) return std::unexpected(text.error());
  auto parsed = core::ParseJsonDocument(*text, {.max_bytes = kMaxIndexBytes});
  if (!parsed) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: {}", index.string(), parsed.error().message()));
  }
  const nlohmann::json& json = *parsed;
  if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} has no weight_map object", index.string()));
  }
  // A set: the weight_map names each shard once per tensor, and each is read once, in order.
  std::set<std::string> shards;
  for (const auto& [name, shard] : json["weight_map"].items()) {
    if (!shard.is_string()) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: weight_map entry {} is not a string", index.string(), name));
    }
    const std::string shard_name = shard.get<std::string>();
    if (shard_name.find('/') != std::string::npos || shard_name.starts_with(".")) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: shard name '{}' leaves the folder", index.string(), shard_name));
    }
    shards.insert(shard_name);
  }
  std::vector<std::string> files;
  files.reserve(shards.size());
  for (const std::string& shard : shards) files.push_back((index.parent_path() / shard).string());
  return files;
}

}  // namespace modelplane::agent
