// Reading fields out of Kubernetes objects held as JSON, without trusting their shape: a path
// of member names that ends early, meets a non-object or a null gives "absent", never an
// exception (nlohmann's operator[] and value() throw or assert on the wrong types). For objects
// read from informers and webhooks that have no typed view.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace modelplane::core {

// The member at `path`, or nullptr when any step is missing, null or not an object.
[[nodiscard]] const nlohmann::json* FindMember(const nlohmann::json& object,
                                               std::initializer_list<std::string_view> path);

// The string at `path`, or "" when absent or not a string.
[[nodiscard]] std::string StringMember(const nlohmann::json& object,
                                       std::initializer_list<std::string_view> path);

// The integer at `path`, or `fallback` when absent or not an integer.
[[nodiscard]] std::int64_t IntegerMember(const nlohmann::json& object,
                                         std::initializer_list<std::string_view> path,
                                         std::int64_t fallback = 0);

// The boolean at `path`, or false.
[[nodiscard]] bool BoolMember(const nlohmann::json& object,
                              std::initializer_list<std::string_view> path);

// The string-valued members of the object at `path` (labels, nodeSelector); members of other
// types are skipped, and a missing or non-object value gives an empty map.
[[nodiscard]] std::map<std::string, std::string> StringMapMember(
    const nlohmann::json& object, std::initializer_list<std::string_view> path);

}  // namespace modelplane::core
