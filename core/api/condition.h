// A status condition in the shape of Kubernetes metav1.Condition, shared by both API kinds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/timestamp.h"
#include "core/error/error.h"
#include "core/json/json_object_reader.h"

namespace modelplane::core::api {

inline constexpr std::string_view kConditionTrue = "True";
inline constexpr std::string_view kConditionFalse = "False";
inline constexpr std::string_view kConditionUnknown = "Unknown";

struct Condition {
  std::string type;    // e.g. "Ready", "Valid"
  std::string status;  // "True", "False" or "Unknown"
  std::int64_t observed_generation = 0;
  Timestamp last_transition_time{};
  std::string reason;  // CamelCase, machine-readable
  std::string message;

  friend bool operator==(const Condition&, const Condition&) = default;
};

[[nodiscard]] Result<Condition> ConditionFromJson(const JsonObjectReader& reader);
[[nodiscard]] nlohmann::json ToJson(const Condition& condition);

// Reads and writes a "conditions" array under `key`.
[[nodiscard]] Status ReadConditions(const JsonObjectReader& reader, std::vector<Condition>& out);
[[nodiscard]] nlohmann::json ConditionsToJson(const std::vector<Condition>& conditions);

}  // namespace modelplane::core::api
