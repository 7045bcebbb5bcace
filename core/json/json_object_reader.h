// Reads typed fields out of one JSON object, naming the JSON path of any bad field.
//
// Every API type's FromJson is written with this reader so all of them treat input the same way:
// null means absent (Kubernetes clients write null for unset optionals), unknown keys are
// ignored (the API server prunes them; a newer CRD may add fields), every string and collection
// has a bound, and integers must be whole numbers in range. Errors read like
// "spec.files[3].size: must be an integer".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error/error.h"

namespace modelplane::core {

enum class Presence { kOptional, kRequired };

// An Error whose message is "<path>: <what>". Declared before JsonObjectReader, whose templates
// use it.
[[nodiscard]] std::unexpected<Error> FieldError(std::string_view path, std::string_view what);

class JsonObjectReader {
 public:
  // Fails unless `value` is an object.
  [[nodiscard]] static Result<JsonObjectReader> Create(const nlohmann::json& value,
                                                       std::string path);

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string PathOf(std::string_view key) const;
  [[nodiscard]] const nlohmann::json& object() const { return *object_; }

  // The value under key, or nullptr when absent or null (an error when required).
  [[nodiscard]] Result<const nlohmann::json*> Find(std::string_view key, Presence presence) const;

  [[nodiscard]] Status String(std::string_view key, std::string& out, std::size_t max_length,
                              Presence presence = Presence::kOptional) const;
  [[nodiscard]] Status Int64(std::string_view key, std::int64_t& out,
                             Presence presence = Presence::kOptional) const;
  [[nodiscard]] Status Int64(std::string_view key, std::optional<std::int64_t>& out) const;
  [[nodiscard]] Status Int32(std::string_view key, std::int32_t& out,
                             Presence presence = Presence::kOptional) const;
  [[nodiscard]] Status Int32(std::string_view key, std::optional<std::int32_t>& out) const;
  [[nodiscard]] Status Bool(std::string_view key, bool& out,
                            Presence presence = Presence::kOptional) const;
  [[nodiscard]] Status Bool(std::string_view key, std::optional<bool>& out) const;
  [[nodiscard]] Status Number(std::string_view key, std::optional<double>& out) const;
  [[nodiscard]] Status StringMap(std::string_view key, std::map<std::string, std::string>& out,
                                 std::size_t max_entries, std::size_t max_key_length,
                                 std::size_t max_value_length) const;
  // Values integers.
  [[nodiscard]] Status Int64Map(std::string_view key, std::map<std::string, std::int64_t>& out,
                                std::size_t max_entries, std::size_t max_key_length) const;
  [[nodiscard]] Status StringList(std::string_view key, std::vector<std::string>& out,
                                  std::size_t max_items, std::size_t max_length) const;

  // Calls parse(reader) for the object under key; absent or null leaves `out` empty.
  template <typename T>
  [[nodiscard]] Status Object(
      std::string_view key, std::optional<T>& out,
      const std::function<Result<T>(const JsonObjectReader&)>& parse) const {
    auto value = Find(key, Presence::kOptional);
    if (!value) return std::unexpected(value.error());
    if (*value == nullptr) return Ok();
    auto parsed = ParseChild<T>(key, **value, parse);
    if (!parsed) return std::unexpected(parsed.error());
    out = std::move(*parsed);
    return Ok();
  }

  // Calls parse(reader) for the object under key, which must be present.
  template <typename T>
  [[nodiscard]] Status RequiredObject(
      std::string_view key, T& out,
      const std::function<Result<T>(const JsonObjectReader&)>& parse) const {
    auto value = Find(key, Presence::kRequired);
    if (!value) return std::unexpected(value.error());
    auto parsed = ParseChild<T>(key, **value, parse);
    if (!parsed) return std::unexpected(parsed.error());
    out = std::move(*parsed);
    return Ok();
  }

  // Calls parse(item_value, item_path) for each element of the array under key.
  template <typename T>
  [[nodiscard]] Status Array(
      std::string_view key, std::vector<T>& out, std::size_t max_items,
      const std::function<Result<T>(const nlohmann::json&, const std::string&)>& parse,
      Presence presence = Presence::kOptional) const {
    auto array = ArrayValue(key, max_items, presence);
    if (!array) return std::unexpected(array.error());
    out.clear();
    if (!*array) return Ok();
    out.reserve((*array)->size());
    const std::string array_path = PathOf(key);
    for (std::size_t i = 0; i < (*array)->size(); ++i) {
      auto item = parse((**array)[i], ArrayItemPath(array_path, i));
      if (!item) return std::unexpected(item.error());
      out.push_back(std::move(*item));
    }
    return Ok();
  }

  // Convenience for array items that must be objects.
  template <typename T>
  [[nodiscard]] Status ObjectArray(std::string_view key, std::vector<T>& out, std::size_t max_items,
                                   const std::function<Result<T>(const JsonObjectReader&)>& parse,
                                   Presence presence = Presence::kOptional) const {
    return Array<T>(
        key, out, max_items,
        [&parse](const nlohmann::json& item, const std::string& item_path) -> Result<T> {
          auto reader = Create(item, item_path);
          if (!reader) return std::unexpected(reader.error());
          return parse(*reader);
        },
        presence);
  }

 private:
  JsonObjectReader(const nlohmann::json* object, std::string path)
      : object_(object), path_(std::move(path)) {}

  template <typename T>
  [[nodiscard]] Result<T> ParseChild(
      std::string_view key, const nlohmann::json& value,
      const std::function<Result<T>(const JsonObjectReader&)>& parse) const {
    auto reader = Create(value, PathOf(key));
    if (!reader) return std::unexpected(reader.error());
    return parse(*reader);
  }
  [[nodiscard]] Result<const nlohmann::json*> ArrayValue(std::string_view key,
                                                         std::size_t max_items,
                                                         Presence presence) const;
  [[nodiscard]] static std::string ArrayItemPath(const std::string& array_path, std::size_t i);

  const nlohmann::json* object_;
  std::string path_;
};

// Returns the error of a Status or Result expression from the enclosing function.
#define MODELPLANE_JSON_TRY(expression)                       \
  do {                                                        \
    if (auto try_result_ = (expression); !try_result_) {      \
      return std::unexpected(std::move(try_result_).error()); \
    }                                                         \
  } while (false)

}  // namespace modelplane::core
