#include "core/api/condition.h"

#include <optional>

#include "core/api/limits.h"

namespace modelplane::core::api {

Result<Condition> ConditionFromJson(const JsonObjectReader& reader) {
  Condition condition;
  MODELPLANE_JSON_TRY(reader.String("type", condition.type, 316, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("status", condition.status, 16, Presence::kRequired));
  if (condition.status != kConditionTrue && condition.status != kConditionFalse &&
      condition.status != kConditionUnknown) {
    return FieldError(reader.PathOf("status"), "must be True, False or Unknown");
  }
  MODELPLANE_JSON_TRY(reader.Int64("observedGeneration", condition.observed_generation));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "lastTransitionTime", condition.last_transition_time));
  MODELPLANE_JSON_TRY(reader.String("reason", condition.reason, 1024, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("message", condition.message, kMaxLongString));
  return condition;
}

nlohmann::json ToJson(const Condition& condition) {
  nlohmann::json out = {{"type", condition.type},
                        {"status", condition.status},
                        {"lastTransitionTime", FormatTimestamp(condition.last_transition_time)},
                        {"reason", condition.reason},
                        {"message", condition.message}};
  if (condition.observed_generation != 0) {
    out["observedGeneration"] = condition.observed_generation;
  }
  return out;
}

Status ReadConditions(const JsonObjectReader& reader, std::vector<Condition>& out) {
  return reader.ObjectArray<Condition>("conditions", out, kMaxConditions, ConditionFromJson);
}

nlohmann::json ConditionsToJson(const std::vector<Condition>& conditions) {
  nlohmann::json out = nlohmann::json::array();
  for (const Condition& condition : conditions) out.push_back(ToJson(condition));
  return out;
}

}  // namespace modelplane::core::api
