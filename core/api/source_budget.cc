#include "core/api/source_budget.h"

#include <algorithm>
#include <cctype>

#include "core/api/limits.h"
#include "core/api/source_identity.h"
#include "core/digest/sha256.h"
#include "core/json/json_object_reader.h"

namespace modelplane::core::api {
namespace {

Result<SourceBudgetSpec> BudgetSpecFromReader(const JsonObjectReader& reader) {
  SourceBudgetSpec spec;
  MODELPLANE_JSON_TRY(
      reader.String("source", spec.source, kMaxSourceIdentityLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.Int32("maxStreams", spec.max_streams));
  MODELPLANE_JSON_TRY(reader.Int64("maxBytesPerSecond", spec.max_bytes_per_second));
  return spec;
}

Result<SourceBudgetStatus> BudgetStatusFromReader(const JsonObjectReader& reader) {
  SourceBudgetStatus status;
  MODELPLANE_JSON_TRY(reader.Int32("streams", status.streams));
  MODELPLANE_JSON_TRY(reader.Int64("bytesPerSecond", status.bytes_per_second));
  MODELPLANE_JSON_TRY(reader.String("phase", status.phase, kMaxEnumLength));
  MODELPLANE_JSON_TRY(reader.String("reason", status.reason, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.Int32("kneeStreams", status.knee_streams));
  MODELPLANE_JSON_TRY(reader.Int64("bestBytesPerSecond", status.best_bytes_per_second));
  MODELPLANE_JSON_TRY(reader.Int32("bestStreams", status.best_streams));
  MODELPLANE_JSON_TRY(reader.Int64("perStreamBytesPerSecond", status.per_stream_bytes_per_second));
  MODELPLANE_JSON_TRY(reader.Int64("bestTtfbMilliseconds", status.best_ttfb_milliseconds));
  MODELPLANE_JSON_TRY(reader.Int32("stepsAtKnee", status.steps_at_knee));
  MODELPLANE_JSON_TRY(reader.Int64("observedBytesPerSecond", status.observed_bytes_per_second));
  MODELPLANE_JSON_TRY(reader.Int32("observedStreams", status.observed_streams));
  MODELPLANE_JSON_TRY(reader.Int64("throttledRequests", status.throttled_requests));
  MODELPLANE_JSON_TRY(reader.Int64("failedRequests", status.failed_requests));
  MODELPLANE_JSON_TRY(reader.Int32("grantedStreams", status.granted_streams));
  MODELPLANE_JSON_TRY(reader.Int32("waitingStagings", status.waiting_stagings));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "lastStepTime", status.last_step_time));
  return status;
}

}  // namespace

std::string SourceBudgetName(std::string_view identity) {
  std::string tier(SourceIdentityTier(identity));
  if (tier.empty()) tier = "source";
  std::transform(tier.begin(), tier.end(), tier.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return tier + "-" + Sha256HexOf(identity).substr(0, 16);
}

Result<SourceBudgetObject> SourceBudgetFromJson(const nlohmann::json& value) {
  auto reader = JsonObjectReader::Create(value, "");
  if (!reader) return std::unexpected(reader.error());
  SourceBudgetObject budget;
  auto meta = ReadTypeAndObjectMeta(*reader, kApiVersion, kSourceBudgetKind);
  if (!meta) return std::unexpected(meta.error());
  budget.metadata = std::move(*meta);
  MODELPLANE_JSON_TRY(
      reader->RequiredObject<SourceBudgetSpec>("spec", budget.spec, BudgetSpecFromReader));
  MODELPLANE_JSON_TRY(
      reader->Object<SourceBudgetStatus>("status", budget.status, BudgetStatusFromReader));
  return budget;
}

nlohmann::json ToJson(const SourceBudgetSpec& spec) {
  nlohmann::json out = {{"source", spec.source}};
  if (spec.max_streams) out["maxStreams"] = *spec.max_streams;
  if (spec.max_bytes_per_second) out["maxBytesPerSecond"] = *spec.max_bytes_per_second;
  return out;
}

nlohmann::json ToJson(const SourceBudgetStatus& status) {
  nlohmann::json out = {{"streams", status.streams},
                        {"phase", status.phase},
                        {"kneeStreams", status.knee_streams},
                        {"bestBytesPerSecond", status.best_bytes_per_second},
                        {"bestStreams", status.best_streams},
                        {"perStreamBytesPerSecond", status.per_stream_bytes_per_second},
                        {"bestTtfbMilliseconds", status.best_ttfb_milliseconds},
                        {"stepsAtKnee", status.steps_at_knee},
                        {"observedBytesPerSecond", status.observed_bytes_per_second},
                        {"observedStreams", status.observed_streams},
                        {"throttledRequests", status.throttled_requests},
                        {"failedRequests", status.failed_requests},
                        {"grantedStreams", status.granted_streams},
                        {"waitingStagings", status.waiting_stagings}};
  if (status.bytes_per_second) out["bytesPerSecond"] = *status.bytes_per_second;
  if (!status.reason.empty()) out["reason"] = status.reason;
  if (status.last_step_time) out["lastStepTime"] = FormatTimestamp(*status.last_step_time);
  return out;
}

nlohmann::json ToJson(const SourceBudgetObject& budget) {
  nlohmann::json out = {{"apiVersion", kApiVersion},
                        {"kind", kSourceBudgetKind},
                        {"metadata", ToJson(budget.metadata)},
                        {"spec", ToJson(budget.spec)}};
  if (budget.status) out["status"] = ToJson(*budget.status);
  return out;
}

}  // namespace modelplane::core::api
