// ModelRevision (modelplane.io/v1alpha1, namespaced): one immutable, versioned execution object.
//
// The spec names the exact bytes (files with sizes and sha256s) and everything that changes how
// they execute; status is written by the operator. Enumerated fields stay strings here, as in
// the Go API conventions, so a parsed object can carry an unknown value to the validator
// (model_revision_validation.h), which reports every problem at once rather than the first.
// JSON conversion follows Kubernetes: lowerCamelCase names, optional fields omitted when empty.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/condition.h"
#include "core/api/object_meta.h"
#include "core/error/error.h"
#include "core/json/json_document.h"

namespace modelplane::core::api {

inline constexpr std::string_view kApiGroup = "modelplane.io";
inline constexpr std::string_view kApiVersion = "modelplane.io/v1alpha1";
inline constexpr std::string_view kModelRevisionKind = "ModelRevision";

// File roles.
inline constexpr std::string_view kRoleWeights = "weights";
inline constexpr std::string_view kRoleIndex = "index";
inline constexpr std::string_view kRoleConfig = "config";
inline constexpr std::string_view kRoleTokenizer = "tokenizer";
inline constexpr std::string_view kRoleQuantization = "quantization";
inline constexpr std::string_view kRoleAdapter = "adapter";
inline constexpr std::string_view kRoleEngineCache = "engine-cache";

inline constexpr std::string_view kFormatSafetensors = "safetensors";

// Source types.
inline constexpr std::string_view kSourceObjectStore = "objectStore";
inline constexpr std::string_view kSourceHttp = "http";
inline constexpr std::string_view kSourceSharedFilesystem = "sharedFilesystem";
inline constexpr std::string_view kSourceHuggingFace = "huggingFace";
inline constexpr std::string_view kSourceModelScope = "modelScope";

// Tiers that can serve a node, in the order the agent prefers them.
inline constexpr std::string_view kTierLocal = "local";
inline constexpr std::string_view kTierPeer = "peer";
inline constexpr std::string_view kTierSharedFilesystem = "sharedFilesystem";
inline constexpr std::string_view kTierObjectStore = "objectStore";
inline constexpr std::string_view kTierHttp = "http";
inline constexpr std::string_view kTierHub = "hub";  // huggingFace and modelScope sources

// Revision phases.
inline constexpr std::string_view kPhasePending = "Pending";
inline constexpr std::string_view kPhaseStaging = "Staging";
inline constexpr std::string_view kPhaseReady = "Ready";
inline constexpr std::string_view kPhaseDegraded = "Degraded";
inline constexpr std::string_view kPhaseRevoked = "Revoked";
inline constexpr std::string_view kPhaseInvalid = "Invalid";

inline constexpr std::string_view kDefaultQuantization = "none";

struct ModelFile {
  std::string path;  // relative, '/'-separated
  std::int64_t size = 0;
  std::string sha256;  // "sha256:<64 lower-case hex>"
  std::string role;

  friend bool operator==(const ModelFile&, const ModelFile&) = default;
};

struct Parallelism {
  std::int32_t tensor_parallel = 1;
  std::int32_t pipeline_parallel = 1;

  friend bool operator==(const Parallelism&, const Parallelism&) = default;
};

struct Quantization {
  std::string method{kDefaultQuantization};
  std::map<std::string, std::string> parameters;

  friend bool operator==(const Quantization&, const Quantization&) = default;
};

struct EngineIdentity {
  std::string name;
  std::string version;
  std::string runtime_cache_key;  // empty when the engine has no compiled artifacts

  friend bool operator==(const EngineIdentity&, const EngineIdentity&) = default;
};

struct ObjectStoreLocation {
  std::string endpoint;
  std::string bucket;
  std::string prefix;
  std::string region;

  friend bool operator==(const ObjectStoreLocation&, const ObjectStoreLocation&) = default;
};

struct HttpLocation {
  std::string base_url;

  friend bool operator==(const HttpLocation&, const HttpLocation&) = default;
};

struct SharedFilesystemLocation {
  std::string path;

  friend bool operator==(const SharedFilesystemLocation&,
                         const SharedFilesystemLocation&) = default;
};

// A model repository on the Hugging Face Hub or ModelScope, or a mirror of either, pinned to
// one commit (core/api/hub_source.h has the defaults and the grammar).
struct HubLocation {
  std::string endpoint;    // empty: the hub's own (kHuggingFaceEndpoint, kModelScopeEndpoint)
  std::string repository;  // "org/name"
  std::string commit;      // 40 lower-case hex digits, never a branch or tag

  friend bool operator==(const HubLocation&, const HubLocation&) = default;
};

struct SecretReference {
  std::string name;
  // Empty: the revision's own namespace. Another namespace's Secret needs a source policy rule
  // (core/policy/source_policy.h).
  std::string namespace_name;

  friend bool operator==(const SecretReference&, const SecretReference&) = default;
};

// Hints for the admission controller; absent means "measure it".
struct SourceCapacity {
  std::optional<std::int64_t> max_bytes_per_second;
  std::optional<std::int32_t> max_concurrent_fetches;

  friend bool operator==(const SourceCapacity&, const SourceCapacity&) = default;
};

struct ModelSource {
  std::string name;
  std::string type;
  std::optional<ObjectStoreLocation> object_store;
  std::optional<HttpLocation> http;
  std::optional<SharedFilesystemLocation> shared_filesystem;
  std::optional<HubLocation> hugging_face;
  std::optional<HubLocation> model_scope;
  std::optional<SecretReference> credentials_secret_ref;
  std::optional<SourceCapacity> capacity;

  friend bool operator==(const ModelSource&, const ModelSource&) = default;
};

struct PrestagePolicy {
  std::map<std::string, std::string> node_selector;
  std::int32_t nodes = 0;

  friend bool operator==(const PrestagePolicy&, const PrestagePolicy&) = default;
};

struct RetentionPolicy {
  std::string rollback_window;  // Go duration such as "24h" or "1h30m"

  friend bool operator==(const RetentionPolicy&, const RetentionPolicy&) = default;
};

// An OpenSSF model-signing signature: the Sigstore bundle (its JSON text) that `model_signing
// sign key|certificate` writes. Its signed in-toto statement lists every file's sha256, which
// must equal spec.files; core/signing verifies it against the source policy's signers.
struct ModelSignature {
  std::string bundle;

  friend bool operator==(const ModelSignature&, const ModelSignature&) = default;
};

// The base model an adapter revision (LoRA) applies to, named by the base revision's digest:
// the adapter is staged beside any revision of its namespace with that digest, pinned and
// evicted with it (docs/serving-pods.md, "LoRA adapters").
struct BaseRevision {
  std::string digest;  // "sha256:<64 hex>"
  std::string name;    // for humans: the base revision's name when the adapter was made

  friend bool operator==(const BaseRevision&, const BaseRevision&) = default;
};

struct ModelRevisionSpec {
  std::string model_name;           // for humans
  std::string repository_revision;  // for humans
  std::vector<ModelFile> files;
  std::string format;
  Parallelism parallelism;
  Quantization quantization;
  EngineIdentity engine;
  std::vector<ModelSource> sources;
  std::optional<PrestagePolicy> prestage;
  std::optional<RetentionPolicy> retention;
  bool revoked = false;
  std::vector<ModelSignature> signatures;  // not part of the digest: they say who vouches
  std::optional<BaseRevision> base;        // set: a LoRA adapter of that base

  friend bool operator==(const ModelRevisionSpec&, const ModelRevisionSpec&) = default;
};

struct LatencyPercentiles {
  double p50 = 0;
  double p95 = 0;
  double p99 = 0;

  friend bool operator==(const LatencyPercentiles&, const LatencyPercentiles&) = default;
};

struct NodeServing {
  std::string node;
  std::string tier;
  std::optional<double> bytes_to_ready_seconds;

  friend bool operator==(const NodeServing&, const NodeServing&) = default;
};

// A workload whose pod template names the revision now (current) or named it before its
// latest rollout (previous: what `kubectl rollout undo` returns to).
struct WorkloadUse {
  std::string kind;  // Deployment, StatefulSet
  std::string name;  // in the revision's namespace
  std::string role;  // current, previous
  std::int32_t pods = 0;
  std::int32_t ready_pods = 0;
  // Role previous: when the workload finished rolling away from this revision; the rollback
  // window counts from here.
  std::optional<Timestamp> completed_at;

  friend bool operator==(const WorkloadUse&, const WorkloadUse&) = default;
};

// A revoked revision's purge: the nodes whose caches still hold any of its bytes. Gone from
// status once the revision is no longer revoked; nodesHolding 0 means the purge is complete.
inline constexpr std::size_t kMaxPurgeNodesListed = 32;
struct PurgeProgress {
  std::int32_t nodes_holding = 0;
  std::int64_t bytes_held = 0;     // summed over those nodes
  std::vector<std::string> nodes;  // the first kMaxPurgeNodesListed, sorted

  friend bool operator==(const PurgeProgress&, const PurgeProgress&) = default;
};

// Where the bytes of the revision's stagings came from, summed over the nodes that report it:
// by tier (kTier*), and the origins' share per node that holds it Ready (object stores, HTTP
// origins and shared filesystems; with fan-out, one origin copy per zone over its nodes).
struct FetchedBytes {
  std::map<std::string, std::int64_t> by_tier;
  std::int64_t origin_bytes = 0;
  std::int64_t origin_bytes_per_replica = 0;

  friend bool operator==(const FetchedBytes&, const FetchedBytes&) = default;
};

// The cluster-scoped ModelRevocation (model_revocation.h) that covers this revision, written by
// the operator: revocation by digest reaches every ModelRevision with that digest, in any
// namespace, without touching specs that their owners (or their GitOps tools) keep.
struct RevokedBy {
  std::string name;    // the ModelRevocation
  std::string reason;  // its spec.reason
  bool force = false;  // purge at once, even while mounted

  friend bool operator==(const RevokedBy&, const RevokedBy&) = default;
};

// A signature of spec.signatures that the operator verified against the source policy's
// signers (core/signing). A ModelRevocation by key or identity covers the revision when every
// one of these is by a revoked key or identity.
struct SignedBy {
  std::string signer;      // the policy's signer rule
  std::string public_key;  // "sha256:<hex>" of the signing key's DER SubjectPublicKeyInfo
  std::string identity;    // certificate signers: the certificate's subjectAltName that matched

  friend bool operator==(const SignedBy&, const SignedBy&) = default;
};

struct ModelRevisionStatus {
  std::int64_t observed_generation = 0;
  std::string digest;
  std::int64_t total_bytes = 0;
  std::string phase;
  std::vector<Condition> conditions;
  std::int32_t desired_nodes = 0;
  std::int32_t staging_nodes = 0;
  std::int32_t ready_nodes = 0;
  std::int32_t failed_nodes = 0;
  std::optional<LatencyPercentiles> bytes_to_ready_seconds;
  std::vector<NodeServing> nodes;
  std::vector<WorkloadUse> workloads;
  std::optional<PurgeProgress> purge;  // while revoked
  std::optional<RevokedBy> revoked_by;
  std::optional<FetchedBytes> fetched;
  std::vector<SignedBy> signed_by;

  friend bool operator==(const ModelRevisionStatus&, const ModelRevisionStatus&) = default;
};

struct ModelRevision {
  ObjectMeta metadata;
  ModelRevisionSpec spec;
  std::optional<ModelRevisionStatus> status;

  friend bool operator==(const ModelRevision&, const ModelRevision&) = default;
};

// Parses JSON text with the bounds of json_document.h. Structural errors only (wrong JSON types,
// missing required fields, over-long values); semantic checks are ValidateModelRevisionSpec.
[[nodiscard]] Result<ModelRevision> ParseModelRevision(std::string_view json_text,
                                                       const JsonLimits& limits = {});
[[nodiscard]] Result<ModelRevision> ModelRevisionFromJson(const nlohmann::json& value);
[[nodiscard]] Result<ModelRevisionSpec> ModelRevisionSpecFromJson(const nlohmann::json& value,
                                                                  std::string path = "spec");

[[nodiscard]] nlohmann::json ToJson(const ModelRevision& revision);
[[nodiscard]] nlohmann::json ToJson(const ModelRevisionSpec& spec);
[[nodiscard]] nlohmann::json ToJson(const ModelRevisionStatus& status);

}  // namespace modelplane::core::api
