// ModelQuota (modelplane.io/v1alpha1, namespaced): an administrator's limits on what one
// namespace's revisions may hold on nodes ahead of need, as ResourceQuota limits what its pods
// may request. Copies that serve pods (reason in-use) and that a rollout stages for its new pods
// (rollout) are never limited: they are the workload itself. What is limited is what a tenant
// can ask for beyond that:
//   - prestagedBytes: the bytes of the namespace's prestaged copies (ModelCache entries with
//     reason prestage), each copy counted at its revision's full size on each node;
//   - pinnedBytes: the bytes of its pinned copies (rollback pins that have not lapsed);
//   - pinTtlAfterLastUse: a pin lapses this long after a pod on that node last used the
//     revision, whatever the revision's own rollback window says.
// Several ModelQuotas in one namespace all apply: the smallest limit of each kind wins.
// The operator enforces them (operator/quotas) and writes what the namespace uses into each
// ModelQuota's status, which tenants may read: it names the namespace's own revisions only.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/object_meta.h"
#include "core/error/error.h"

namespace modelplane::core::api {

inline constexpr std::string_view kModelQuotaKind = "ModelQuota";
// Revisions named in status.limitedRevisions, at most; status.limitedCount counts them all.
inline constexpr std::size_t kMaxLimitedRevisions = 32;

struct ModelQuotaSpec {
  // Bytes; absent: no limit of that kind. Written as Kubernetes quantities ("500Gi", "1T").
  std::optional<std::int64_t> prestaged_bytes;
  std::optional<std::int64_t> pinned_bytes;
  std::optional<std::chrono::seconds> pin_ttl_after_last_use;  // Go duration in JSON

  friend bool operator==(const ModelQuotaSpec&, const ModelQuotaSpec&) = default;
};

struct QuotaBytes {
  std::int64_t prestaged_bytes = 0;
  std::int64_t pinned_bytes = 0;

  friend bool operator==(const QuotaBytes&, const QuotaBytes&) = default;
};

// Each kind summed, saturating at the largest int64 (copies of huge revisions on many nodes).
[[nodiscard]] QuotaBytes SaturatingSum(const QuotaBytes& a, const QuotaBytes& b);

struct ModelQuotaStatus {
  std::int64_t observed_generation = 0;
  QuotaBytes used;
  // The namespace's revisions that hold fewer prestaged or pinned copies than they ask for
  // because of the quota (sorted, at most kMaxLimitedRevisions), and how many there are.
  std::vector<std::string> limited_revisions;
  std::int32_t limited_count = 0;

  friend bool operator==(const ModelQuotaStatus&, const ModelQuotaStatus&) = default;
};

struct ModelQuota {
  ObjectMeta metadata;
  ModelQuotaSpec spec;
  std::optional<ModelQuotaStatus> status;

  friend bool operator==(const ModelQuota&, const ModelQuota&) = default;
};

// Parses and validates: byte limits are non-negative quantities (an integer or a quantity
// string), the TTL a duration (core/api/duration.h).
[[nodiscard]] Result<ModelQuota> ModelQuotaFromJson(const nlohmann::json& value);
[[nodiscard]] nlohmann::json ToJson(const ModelQuotaStatus& status);

// What all the ModelQuotas of one namespace allow together: the smallest limit of each kind.
struct NamespaceQuota {
  std::optional<std::int64_t> prestaged_bytes;
  std::optional<std::int64_t> pinned_bytes;
  std::optional<std::chrono::seconds> pin_ttl_after_last_use;
  // The ModelQuotas that set the limits above, "namespace/name", for messages.
  std::string prestaged_by;
  std::string pinned_by;
  std::string pin_ttl_by;

  // Whether any ModelQuota applies at all.
  [[nodiscard]] bool Limits() const {
    return prestaged_bytes || pinned_bytes || pin_ttl_after_last_use;
  }
  friend bool operator==(const NamespaceQuota&, const NamespaceQuota&) = default;
};

[[nodiscard]] NamespaceQuota CombineQuotas(const std::vector<ModelQuota>& quotas);

}  // namespace modelplane::core::api
