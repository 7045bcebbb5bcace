#include "core/json/json_object_reader.h"

#include <limits>

#include <fmt/format.h>

#include "core/json/json_path.h"

namespace modelplane::core {

std::unexpected<Error> FieldError(std::string_view path, std::string_view what) {
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("{}: {}", JsonPathForDisplay(path), what));
}

Result<JsonObjectReader> JsonObjectReader::Create(const nlohmann::json& value, std::string path) {
  if (!value.is_object()) return FieldError(path, "must be an object");
  return JsonObjectReader(&value, std::move(path));
}

std::string JsonObjectReader::PathOf(std::string_view key) const {
  return JsonPathChild(path_, key);
}

std::string JsonObjectReader::ArrayItemPath(const std::string& array_path, std::size_t i) {
  return JsonPathIndex(array_path, i);
}

Result<const nlohmann::json*> JsonObjectReader::Find(std::string_view key,
                                                     Presence presence) const {
  const auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) {
    if (presence == Presence::kRequired) return FieldError(PathOf(key), "is required");
    return nullptr;
  }
  return &*it;
}

Status JsonObjectReader::String(std::string_view key, std::string& out, std::size_t max_length,
                                Presence presence) const {
  auto value = Find(key, presence);
  if (!value) return std::unexpected(value.error());
  if (!*value) return Ok();
  if (!(*value)->is_string()) return FieldError(PathOf(key), "must be a string");
  const auto& text = (*value)->get_ref<const std::string&>();
  if (text.size() > max_length) {
    return FieldError(PathOf(key), fmt::format("longer than {} bytes", max_length));
  }
  out = text;
  return Ok();
}

Status JsonObjectReader::Int64(std::string_view key, std::int64_t& out, Presence presence) const {
  auto value = Find(key, presence);
  if (!value) return std::unexpected(value.error());
  if (!*value) return Ok();
  if ((*value)->is_number_integer() && !(*value)->is_number_unsigned()) {
    out = (*value)->get<std::int64_t>();
    return Ok();
  }
  if ((*value)->is_number_unsigned()) {
    const auto unsigned_value = (*value)->get<std::uint64_t>();
    if (unsigned_value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return FieldError(PathOf(key), "is out of the int64 range");
    }
    out = static_cast<std::int64_t>(unsigned_value);
    return Ok();
  }
  if ((*value)->is_number_float()) return FieldError(PathOf(key), "must be an integer");
  return FieldError(PathOf(key), "must be an integer");
}

Status JsonObjectReader::Int64(std::string_view key, std::optional<std::int64_t>& out) const {
  std::int64_t value = 0;
  auto found = Find(key, Presence::kOptional);
  if (!found) return std::unexpected(found.error());
  if (!*found) return Ok();
  if (auto status = Int64(key, value); !status) return status;
  out = value;
  return Ok();
}

Status JsonObjectReader::Int32(std::string_view key, std::int32_t& out, Presence presence) const {
  std::int64_t value = out;
  if (auto status = Int64(key, value, presence); !status) return status;
  if (value < std::numeric_limits<std::int32_t>::min() ||
      value > std::numeric_limits<std::int32_t>::max()) {
    return FieldError(PathOf(key), "is out of the int32 range");
  }
  out = static_cast<std::int32_t>(value);
  return Ok();
}

Status JsonObjectReader::Int32(std::string_view key, std::optional<std::int32_t>& out) const {
  auto found = Find(key, Presence::kOptional);
  if (!found) return std::unexpected(found.error());
  if (!*found) return Ok();
  std::int32_t value = 0;
  if (auto status = Int32(key, value); !status) return status;
  out = value;
  return Ok();
}

Status JsonObjectReader::Bool(std::string_view key, bool& out, Presence presence) const {
  auto value = Find(key, presence);
  if (!value) return std::unexpected(value.error());
  if (!*value) return Ok();
  if (!(*value)->is_boolean()) return FieldError(PathOf(key), "must be a boolean");
  out = (*value)->get<bool>();
  return Ok();
}

Status JsonObjectReader::Bool(std::string_view key, std::optional<bool>& out) const {
  auto found = Find(key, Presence::kOptional);
  if (!found) return std::unexpected(found.error());
  if (!*found) return Ok();
  bool value = false;
  MODELPLANE_JSON_TRY(Bool(key, value));
  out = value;
  return Ok();
}

Status JsonObjectReader::Number(std::string_view key, std::optional<double>& out) const {
  auto value = Find(key, Presence::kOptional);
  if (!value) return std::unexpected(value.error());
  if (!*value) return Ok();
  if (!(*value)->is_number()) return FieldError(PathOf(key), "must be a number");
  out = (*value)->get<double>();
  return Ok();
}

namespace {

// The object under `key` of `reader` as a reader of its own, checked against the bounds every
// map has; nullopt when absent or null.
Result<std::optional<JsonObjectReader>> MapReader(const JsonObjectReader& reader,
                                                  std::string_view key, std::size_t max_entries,
                                                  std::size_t max_key_length) {
  auto value = reader.Find(key, Presence::kOptional);
  if (!value) return std::unexpected(value.error());
  if (*value == nullptr) return std::optional<JsonObjectReader>();
  auto map_reader = JsonObjectReader::Create(**value, reader.PathOf(key));
  if (!map_reader) return std::unexpected(map_reader.error());
  const nlohmann::json& object = map_reader->object();
  if (object.size() > max_entries) {
    return FieldError(reader.PathOf(key), fmt::format("has more than {} entries", max_entries));
  }
  for (const auto& [entry_key, entry_value] : object.items()) {
    if (entry_key.size() > max_key_length) {
      return FieldError(reader.PathOf(key),
                        fmt::format("has a key longer than {} bytes", max_key_length));
    }
  }
  return std::optional<JsonObjectReader>(std::move(*map_reader));
}

}  // namespace

Status JsonObjectReader::StringMap(std::string_view key, std::map<std::string, std::string>& out,
                                   std::size_t max_entries, std::size_t max_key_length,
                                   std::size_t max_value_length) const {
  out.clear();
  auto map_reader = MapReader(*this, key, max_entries, max_key_length);
  if (!map_reader) return std::unexpected(map_reader.error());
  if (!*map_reader) return Ok();
  for (const auto& [entry_key, entry_value] : (*map_reader)->object().items()) {
    MODELPLANE_JSON_TRY(
        (*map_reader)->String(entry_key, out[entry_key], max_value_length, Presence::kRequired));
  }
  return Ok();
}

Status JsonObjectReader::Int64Map(std::string_view key, std::map<std::string, std::int64_t>& out,
                                  std::size_t max_entries, std::size_t max_key_length) const {
  out.clear();
  auto map_reader = MapReader(*this, key, max_entries, max_key_length);
  if (!map_reader) return std::unexpected(map_reader.error());
  if (!*map_reader) return Ok();
  for (const auto& [entry_key, entry_value] : (*map_reader)->object().items()) {
    MODELPLANE_JSON_TRY((*map_reader)->Int64(entry_key, out[entry_key], Presence::kRequired));
  }
  return Ok();
}

Status JsonObjectReader::StringList(std::string_view key, std::vector<std::string>& out,
                                    std::size_t max_items, std::size_t max_length) const {
  return Array<std::string>(key, out, max_items,
                            [max_length](const nlohmann::json& item,
                                         const std::string& item_path) -> Result<std::string> {
                              if (!item.is_string())
                                return FieldError(item_path, "must be a string");
                              const auto& text = item.get_ref<const std::string&>();
                              if (text.size() > max_length) {
                                return FieldError(item_path,
                                                  fmt::format("longer than {} bytes", max_length));
                              }
                              return text;
                            });
}

Result<const nlohmann::json*> JsonObjectReader::ArrayValue(std::string_view key,
                                                           std::size_t max_items,
                                                           Presence presence) const {
  auto value = Find(key, presence);
  if (!value) return std::unexpected(value.error());
  if (!*value) return nullptr;
  if (!(*value)->is_array()) return FieldError(PathOf(key), "must be an array");
  if ((*value)->size() > max_items) {
    return FieldError(PathOf(key), fmt::format("has more than {} items", max_items));
  }
  return *value;
}

}  // namespace modelplane::core
