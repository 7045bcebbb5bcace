// ModelCache (modelplane.io/v1alpha1, cluster-scoped, named after its node): what one node should
// hold (spec, written by the operator) and what it holds (status, written by the node agent).
//
// Enumerated fields are strings as in model_revision.h; the constants below are the values the
// CRD allows. Revisions are keyed by digest in status because the store is content-addressed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/condition.h"
#include "core/api/json_document.h"
#include "core/api/object_meta.h"
#include "core/api/timestamp.h"
#include "core/error/error.h"

namespace modelplane::core::api {

inline constexpr std::string_view kModelCacheKind = "ModelCache";

// Why the operator wants a revision on the node.
inline constexpr std::string_view kReasonPrestage = "prestage";
inline constexpr std::string_view kReasonInUse = "in-use";
inline constexpr std::string_view kReasonRollback = "rollback";

// Per-revision states reported by the agent.
inline constexpr std::string_view kCacheStatePending = "Pending";
inline constexpr std::string_view kCacheStateStaging = "Staging";
inline constexpr std::string_view kCacheStateReady = "Ready";
inline constexpr std::string_view kCacheStateEvicting = "Evicting";
inline constexpr std::string_view kCacheStateFailed = "Failed";

struct RevisionReference {
  std::string namespace_name;  // "namespace" in JSON
  std::string name;

  friend bool operator==(const RevisionReference&, const RevisionReference&) = default;
};

struct DesiredRevision {
  RevisionReference revision;
  std::string digest;
  bool pinned = false;
  std::string reason;  // prestage, in-use or rollback

  friend bool operator==(const DesiredRevision&, const DesiredRevision&) = default;
};

struct ModelCacheSpec {
  std::vector<DesiredRevision> revisions;

  friend bool operator==(const ModelCacheSpec&, const ModelCacheSpec&) = default;
};

// When each stage of staging a revision finished; bytes-to-ready is published - queued.
struct StageTimestamps {
  std::optional<Timestamp> queued;
  std::optional<Timestamp> first_byte;
  std::optional<Timestamp> last_byte;
  std::optional<Timestamp> verified;
  std::optional<Timestamp> published;

  friend bool operator==(const StageTimestamps&, const StageTimestamps&) = default;
};

struct CachedRevision {
  std::string digest;
  std::string state;
  std::int64_t bytes_done = 0;
  std::int64_t bytes_total = 0;
  std::string source_tier;  // see the kTier* constants in model_revision.h
  StageTimestamps timestamps;
  std::optional<Timestamp> last_used;
  std::string message;

  friend bool operator==(const CachedRevision&, const CachedRevision&) = default;
};

struct ModelCacheStatus {
  std::int64_t observed_generation = 0;
  std::int64_t capacity_bytes = 0;
  std::int64_t used_bytes = 0;
  std::int64_t reserved_bytes = 0;
  std::int64_t media_bandwidth_bytes_per_second = 0;
  std::string peer_endpoint;
  std::vector<Condition> conditions;
  std::vector<CachedRevision> revisions;

  friend bool operator==(const ModelCacheStatus&, const ModelCacheStatus&) = default;
};

struct ModelCache {
  ObjectMeta metadata;
  ModelCacheSpec spec;
  std::optional<ModelCacheStatus> status;

  friend bool operator==(const ModelCache&, const ModelCache&) = default;
};

[[nodiscard]] Result<ModelCache> ParseModelCache(std::string_view json_text,
                                                 const JsonLimits& limits = {});
[[nodiscard]] Result<ModelCache> ModelCacheFromJson(const nlohmann::json& value);

[[nodiscard]] nlohmann::json ToJson(const ModelCache& cache);
[[nodiscard]] nlohmann::json ToJson(const ModelCacheSpec& spec);
[[nodiscard]] nlohmann::json ToJson(const ModelCacheStatus& status);

}  // namespace modelplane::core::api
