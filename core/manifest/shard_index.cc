#include "core/manifest/shard_index.h"

#include <fmt/format.h>

#include "core/json/json_document.h"

namespace modelplane::core {

bool IsSafetensorsIndex(std::string_view path) {
  return path.ends_with(".safetensors.index.json");
}

Result<std::set<std::string>> ShardsNamedByIndex(std::string_view index_path,
                                                 std::string_view text) {
  const auto refuse = [index_path](std::string_view problem) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} is not a safetensors index: {}", index_path, problem));
  };
  // An index is two levels deep; its size is what the caller chose to read.
  auto index = ParseJsonDocument(text, {.max_bytes = text.size(), .max_depth = 4});
  if (!index) return refuse(index.error().message());
  const auto weight_map = index->is_object() ? index->find("weight_map") : index->end();
  if (weight_map == index->end() || !weight_map->is_object()) return refuse("no weight_map");
  const std::size_t slash = index_path.rfind('/');
  const std::string folder =
      slash == std::string_view::npos ? "" : std::string(index_path.substr(0, slash + 1));
  std::set<std::string> shards;
  for (const auto& [tensor, shard] : weight_map->items()) {
    if (!shard.is_string() || shard.get_ref<const std::string&>().empty()) {
      return refuse(fmt::format("tensor {} has no shard file", tensor));
    }
    shards.insert(folder + shard.get<std::string>());
  }
  return shards;
}

Result<std::vector<std::string>> ShardsMissingFrom(std::string_view index_path,
                                                   std::string_view text,
                                                   const std::set<std::string>& paths) {
  auto shards = ShardsNamedByIndex(index_path, text);
  if (!shards) return std::unexpected(shards.error());
  std::vector<std::string> missing;
  for (const std::string& shard : *shards) {
    if (!paths.contains(shard)) missing.push_back(shard);
  }
  return missing;
}

}  // namespace modelplane::core
