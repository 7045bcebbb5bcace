#include "core/api/model_quota.h"

#include <algorithm>
#include <limits>

#include "core/api/duration.h"
#include "core/api/limits.h"
#include "core/api/model_revision.h"
#include "core/api/quantity.h"
#include "core/json/json_object_reader.h"

namespace modelplane::core::api {
namespace {

// A byte limit: an integer, or a Kubernetes quantity string ("500Gi", "1T"); bytes are whole,
// so a fraction rounds up as Kubernetes rounds requests.
Status ReadByteLimit(const JsonObjectReader& reader, std::string_view key,
                     std::optional<std::int64_t>& out) {
  auto found = reader.Find(key, Presence::kOptional);
  if (!found) return std::unexpected(found.error());
  if (*found == nullptr) return Ok();
  const nlohmann::json& value = **found;
  if (value.is_number_integer()) {
    const auto bytes = value.get<std::int64_t>();
    if (bytes < 0) return FieldError(reader.PathOf(key), "must not be negative");
    out = bytes;
    return Ok();
  }
  if (!value.is_string() || value.get_ref<const std::string&>().size() > kMaxEnumLength) {
    return FieldError(reader.PathOf(key), "must be a byte count or a quantity such as 500Gi");
  }
  auto milli = ParseMilliQuantity(value.get_ref<const std::string&>());
  if (!milli) {
    return FieldError(reader.PathOf(key), "must be a byte count or a quantity such as 500Gi");
  }
  out = *milli / 1000 + (*milli % 1000 != 0 ? 1 : 0);
  return Ok();
}

Result<ModelQuotaSpec> QuotaSpecFromReader(const JsonObjectReader& reader) {
  ModelQuotaSpec spec;
  MODELPLANE_JSON_TRY(ReadByteLimit(reader, "prestagedBytes", spec.prestaged_bytes));
  MODELPLANE_JSON_TRY(ReadByteLimit(reader, "pinnedBytes", spec.pinned_bytes));
  std::string ttl;
  MODELPLANE_JSON_TRY(reader.String("pinTtlAfterLastUse", ttl, kMaxEnumLength));
  if (!ttl.empty()) {
    auto parsed = ParseDuration(ttl);
    if (!parsed) return FieldError(reader.PathOf("pinTtlAfterLastUse"), parsed.error().message());
    spec.pin_ttl_after_last_use = *parsed;
  }
  return spec;
}

Result<QuotaBytes> QuotaBytesFromReader(const JsonObjectReader& reader) {
  QuotaBytes bytes;
  MODELPLANE_JSON_TRY(reader.Int64("prestagedBytes", bytes.prestaged_bytes));
  MODELPLANE_JSON_TRY(reader.Int64("pinnedBytes", bytes.pinned_bytes));
  return bytes;
}

Result<ModelQuotaStatus> QuotaStatusFromReader(const JsonObjectReader& reader) {
  ModelQuotaStatus status;
  MODELPLANE_JSON_TRY(reader.Int64("observedGeneration", status.observed_generation));
  std::optional<QuotaBytes> used;
  MODELPLANE_JSON_TRY(reader.Object<QuotaBytes>("used", used, QuotaBytesFromReader));
  if (used) status.used = *used;
  MODELPLANE_JSON_TRY(reader.StringList("limitedRevisions", status.limited_revisions,
                                        kMaxLimitedRevisions, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.Int32("limitedCount", status.limited_count));
  return status;
}

}  // namespace

Result<ModelQuota> ModelQuotaFromJson(const nlohmann::json& value) {
  auto reader = JsonObjectReader::Create(value, "");
  if (!reader) return std::unexpected(reader.error());
  ModelQuota quota;
  auto meta = ReadTypeAndObjectMeta(*reader, kApiVersion, kModelQuotaKind);
  if (!meta) return std::unexpected(meta.error());
  quota.metadata = std::move(*meta);
  std::optional<ModelQuotaSpec> spec;
  MODELPLANE_JSON_TRY(reader->Object<ModelQuotaSpec>("spec", spec, QuotaSpecFromReader));
  if (spec) quota.spec = *spec;
  MODELPLANE_JSON_TRY(
      reader->Object<ModelQuotaStatus>("status", quota.status, QuotaStatusFromReader));
  return quota;
}

nlohmann::json ToJson(const ModelQuotaStatus& status) {
  return {{"observedGeneration", status.observed_generation},
          {"used",
           {{"prestagedBytes", status.used.prestaged_bytes},
            {"pinnedBytes", status.used.pinned_bytes}}},
          {"limitedRevisions", status.limited_revisions},
          {"limitedCount", status.limited_count}};
}

QuotaBytes SaturatingSum(const QuotaBytes& a, const QuotaBytes& b) {
  const auto add = [](std::int64_t x, std::int64_t y) {
    std::int64_t sum = 0;
    return __builtin_add_overflow(x, y, &sum) ? std::numeric_limits<std::int64_t>::max() : sum;
  };
  return {.prestaged_bytes = add(a.prestaged_bytes, b.prestaged_bytes),
          .pinned_bytes = add(a.pinned_bytes, b.pinned_bytes)};
}

NamespaceQuota CombineQuotas(const std::vector<ModelQuota>& quotas) {
  NamespaceQuota combined;
  // The smallest limit wins; among equal ones the first by name names it, whatever the order.
  std::vector<const ModelQuota*> sorted;
  sorted.reserve(quotas.size());
  for (const ModelQuota& quota : quotas) sorted.push_back(&quota);
  std::sort(sorted.begin(), sorted.end(), [](const ModelQuota* a, const ModelQuota* b) {
    return a->metadata.name < b->metadata.name;
  });
  const auto take = [](auto& limit, std::string& by, const auto& candidate,
                       const ModelQuota& quota) {
    if (!candidate || (limit && *limit <= *candidate)) return;
    limit = candidate;
    by = quota.metadata.namespace_name + "/" + quota.metadata.name;
  };
  for (const ModelQuota* quota : sorted) {
    take(combined.prestaged_bytes, combined.prestaged_by, quota->spec.prestaged_bytes, *quota);
    take(combined.pinned_bytes, combined.pinned_by, quota->spec.pinned_bytes, *quota);
    take(combined.pin_ttl_after_last_use, combined.pin_ttl_by, quota->spec.pin_ttl_after_last_use,
         *quota);
  }
  return combined;
}

}  // namespace modelplane::core::api
