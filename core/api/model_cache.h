// ModelCache (modelplane.io/v1alpha1, cluster-scoped, named after its node): what one node should
// hold (spec, written by the operator) and what it holds (status, written by the node agent).
//
// Enumerated fields are strings as in model_revision.h; the constants below are the values the
// CRD allows. Revisions are keyed by digest in status because the store is content-addressed.
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
#include "core/api/timestamp.h"
#include "core/error/error.h"
#include "core/json/json_document.h"

namespace modelplane::core::api {

inline constexpr std::string_view kModelCacheKind = "ModelCache";

// Why the operator wants a revision on the node.
inline constexpr std::string_view kReasonPrestage = "prestage";
inline constexpr std::string_view kReasonInUse = "in-use";
inline constexpr std::string_view kReasonRollback = "rollback";
// A workload's pods are moving to this revision: it is staged where they run before they roll.
inline constexpr std::string_view kReasonRollout = "rollout";

// Per-revision states reported by the agent.
inline constexpr std::string_view kCacheStatePending = "Pending";
inline constexpr std::string_view kCacheStateStaging = "Staging";
inline constexpr std::string_view kCacheStateReady = "Ready";
inline constexpr std::string_view kCacheStateEvicting = "Evicting";
inline constexpr std::string_view kCacheStateFailed = "Failed";

// Why an entry is in a state (CachedRevision::reason), where the state alone does not say.
// Failed: the staging was refused before it started, because the revision cannot fit without
// evicting protected content (or content worth more than a speculative staging).
inline constexpr std::string_view kCacheReasonInsufficientCapacity = "InsufficientCapacity";
// Failed: the administrator's source policy does not allow a source the revision names
// (core/policy/source_policy.h); nothing was read.
inline constexpr std::string_view kCacheReasonSourcePolicyDenied = "SourcePolicyDenied";
// Failed: the staging ran and did not finish. The message names only what the spec names (file
// paths, source names); error texts, which can hold remote response bodies, local paths and
// digests computed from what was read, stay in the agent's log.
inline constexpr std::string_view kCacheReasonSourceAccessDenied = "SourceAccessDenied";
// Failed: a source's host name resolved only to special-purpose addresses (loopback, private,
// link-local, ...) its source policy rule does not list in `addresses`; no connection was made.
// The addresses go to the agent's log, not to status.
inline constexpr std::string_view kCacheReasonSourceAddressDenied = "SourceAddressDenied";
inline constexpr std::string_view kCacheReasonSourceNotFound = "SourceNotFound";
inline constexpr std::string_view kCacheReasonSourceUnavailable = "SourceUnavailable";
inline constexpr std::string_view kCacheReasonVerificationFailed = "VerificationFailed";
inline constexpr std::string_view kCacheReasonNoSpace = "NoSpace";
inline constexpr std::string_view kCacheReasonStagingFailed = "StagingFailed";
// Failed: the staging landed less than the agent's fetch.minGoodput a second over a whole
// goodput window (a source that trickles or stalls after its first bytes); the message gives
// its pace in numbers only.
inline constexpr std::string_view kCacheReasonSourceTooSlow = "SourceTooSlow";
// Evicting: the revision is revoked; the entry stays, bytesDone counting the bytes still held,
// until its blobs are purged (the message says what the purge waits for).
inline constexpr std::string_view kCacheReasonRevoked = "Revoked";
// The revision's own sources did not serve the bytes its files name, so bytes this node holds
// for another revision of the same digest are not reused for it (SourceProof).
inline constexpr std::string_view kCacheReasonPossessionNotProven = "PossessionNotProven";
// Evicting: the cache is above its high watermark, or room is made for an admitted staging.
inline constexpr std::string_view kCacheReasonHighWatermark = "HighWatermark";
inline constexpr std::string_view kCacheReasonMakingRoom = "MakingRoom";

// Why the node agent will not evict a revision (CachedRevision::protection). Each revision
// lists every class it is in.
inline constexpr std::string_view kProtectionInUse = "inUse";        // mounted, or a pod runs it
inline constexpr std::string_view kProtectionReserved = "reserved";  // staging or admitted
inline constexpr std::string_view kProtectionPinned = "pinned";      // a pin that has not lapsed
inline constexpr std::string_view kProtectionWanted = "wanted";      // the spec lists it
// The zone's last Ready copy while the revision's origin looks down.
inline constexpr std::string_view kProtectionLastZoneCopy = "lastZoneCopy";

// The annotation on a ModelRevision that purges a revoked revision's bytes at once, even while
// pods mount it (their open files stay readable until closed; new reads find nothing).
inline constexpr std::string_view kPurgeAnnotation = "modelplane.io/purge";
inline constexpr std::string_view kPurgeForce = "force";

struct RevisionReference {
  std::string namespace_name;  // "namespace" in JSON
  std::string name;

  friend bool operator==(const RevisionReference&, const RevisionReference&) = default;
};

// A node the operator tells this one to read a revision's files from (fleet scale: no agent
// reads other nodes' status). Chosen per node from the ModelCache statuses the operator watches
// anyway: the zone's Ready holders first, then the zone's staging ones (its seeder among them),
// then Ready holders elsewhere; operator/controllers/peer_choice.h says how.
inline constexpr std::string_view kPeerStateReady = "Ready";
inline constexpr std::string_view kPeerStateStaging = "Staging";
struct PeerSource {
  std::string node;      // the identity its peer certificate names
  std::string endpoint;  // host:port, from its status.peerEndpoint
  std::string zone;
  std::string state;  // Ready: holds the files; Staging: serves each as soon as it verified it
  // The revision's files (sha256 digests) it holds through other revisions; empty: all of them.
  std::vector<std::string> files;

  friend bool operator==(const PeerSource&, const PeerSource&) = default;
};

struct DesiredRevision {
  RevisionReference revision;
  std::string digest;
  bool pinned = false;
  std::string reason;  // prestage, in-use, rollout or rollback
  // A pinned entry's pin lapses then (a rollback window's end); absent: while the entry stays.
  std::optional<Timestamp> pinned_until;
  // Whom to read it from while the node does not hold it; empty once it does.
  std::vector<PeerSource> peers;
  // With peers: the operator's ticket that lets this node read the revision's files from them
  // (core/pki/peer_ticket.h); empty when the operator signs none.
  std::string peer_ticket;
  // Some node proved that this revision's own sources serve its bytes (SourceProof), so any
  // node may use the bytes it holds under this digest for it; until then a node uses them only
  // once it proved that itself (docs/security.md, "Bytes shared across namespaces").
  bool sources_proven = false;

  friend bool operator==(const DesiredRevision&, const DesiredRevision&) = default;
};

// What the fleet knows about a revision digest this node holds (its status lists it), written by
// the operator so that the agent never reads other nodes' caches or every ModelRevision:
// whether other nodes hold it Ready (eviction's refetch cost and the zone's last copy) and
// whether it is revoked (the agent withholds and purges it).
struct Holding {
  std::string digest;
  bool peer_in_zone = false;
  bool peer_elsewhere = false;
  bool revoked = false;
  bool force_purge = false;  // revoked with modelplane.io/purge: force, or a forcing revocation

  friend bool operator==(const Holding&, const Holding&) = default;
};

// How much of one remote source (source_identity.h) the node's stagings may use together,
// granted by the operator's admission controller from the source's budget. The agent enforces
// it across all its stagings until expires_at; past it (the operator is gone) it falls back to
// a small safe capacity of its own. A grant of 0 streams means "wait": a zone's other nodes
// read from its seeder, not from the origin.
struct StreamGrant {
  std::string source;  // the source identity
  std::int32_t streams = 0;
  std::optional<std::int64_t> bytes_per_second;  // a rate to keep under, when the budget has one
  Timestamp expires_at;

  friend bool operator==(const StreamGrant&, const StreamGrant&) = default;
};

struct ModelCacheSpec {
  std::vector<DesiredRevision> revisions;
  // Written by the admission controller (its own field manager), apart from the entries.
  std::vector<StreamGrant> grants;
  // Written by the operator's ModelCache controller (its own field manager): one per digest the
  // status lists.
  std::vector<Holding> holdings;
  // How often the agent may write status while only byte counts move; the operator sets it from
  // the fleet's size so that the fleet's progress writes stay bounded. Absent: the agent's own.
  std::optional<std::int32_t> progress_interval_seconds;

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

// What a node found when it checked that a revision's own sources serve the bytes it holds under
// the revision's digest: its bytes came from those sources, or a sample of random ranges read
// from them matched (docs/security.md, "Bytes shared across namespaces"). Two namespaces' revisions
// with the same files share a digest and so one cache entry; the proof is per revision.
inline constexpr std::string_view kProofStateProven = "Proven";
inline constexpr std::string_view kProofStateFailed = "Failed";
struct SourceProof {
  RevisionReference revision;
  std::string state;    // Proven or Failed
  std::string reason;   // when failed: kCacheReason*
  std::string message;  // when failed: fit for tenant-visible status

  friend bool operator==(const SourceProof&, const SourceProof&) = default;
};

struct CachedRevision {
  std::string digest;
  std::string state;
  std::int64_t bytes_done = 0;
  std::int64_t bytes_total = 0;
  std::string source_tier;  // see the kTier* constants in model_revision.h
  StageTimestamps timestamps;
  std::optional<Timestamp> last_used;  // a pod on this node last had it mounted or ran it
  std::string message;
  std::string reason;  // kCacheReason*, when the state needs one
  // Bytes of blobs no other revision on this node (held or being staged) references: what
  // evicting it would free.
  std::int64_t unique_bytes = 0;
  std::vector<std::string> protection;  // kProtection*, empty when evictable
  // Where the staging's bytes came from, by tier (kTier*): what it fetched from peers and from
  // origins, and what it found already here ("local").
  std::map<std::string, std::int64_t> bytes_by_tier;
  // While staging: bytes landed per second over the agent's goodput window, and the seconds
  // to Ready at that pace (unset while nothing lands: "no finish in sight").
  std::optional<std::int64_t> goodput_bytes_per_second;
  std::optional<std::int64_t> expected_finish_seconds;
  // The revisions of this digest wanted here whose own sources this node checked.
  std::vector<SourceProof> source_proofs;

  friend bool operator==(const CachedRevision&, const CachedRevision&) = default;
};

// Seconds from queued to published (bytes-to-ready), when both are known and in order; the
// operator's status and the kubectl plugin read it alike.
[[nodiscard]] std::optional<double> BytesToReadySeconds(const CachedRevision& cached);

// What the agent measured of one source over its recent window: the admission controller
// sums these over the fleet to step the source's budget. Remote sources are named by identity
// (source_identity.h), peers as "peer/<endpoint>".
struct SourceTelemetry {
  std::string source;
  std::string tier;
  std::int32_t window_seconds = 0;
  Timestamp window_end;
  std::int64_t bytes_per_second = 0;  // bytes the window's completed requests moved / window
  std::int32_t peak_streams = 0;      // most requests in flight at once in the window
  std::int64_t requests_ok = 0;
  std::int64_t requests_throttled = 0;  // 429, 503 SlowDown
  std::int64_t requests_failed = 0;     // other errors
  std::int64_t requests_timed_out = 0;
  std::int64_t ttfb_milliseconds = 0;  // median time to first byte; 0: unknown
  std::int32_t granted_streams = 0;    // what the agent enforced at the window's end; -1: none

  friend bool operator==(const SourceTelemetry&, const SourceTelemetry&) = default;
};

struct ModelCacheStatus {
  std::int64_t observed_generation = 0;
  std::int64_t capacity_bytes = 0;
  std::int64_t used_bytes = 0;
  std::int64_t reserved_bytes = 0;
  std::int64_t media_bandwidth_bytes_per_second = 0;
  std::string peer_endpoint;
  std::string zone;  // the node's topology.kubernetes.io/zone, "" when unlabelled
  // Eviction: the watermarks in bytes, what it could free without touching a protected
  // revision, and what protected revisions hold (each byte counted once).
  std::int64_t high_watermark_bytes = 0;
  std::int64_t low_watermark_bytes = 0;
  std::int64_t reclaimable_bytes = 0;
  std::int64_t protected_bytes = 0;
  std::vector<Condition> conditions;
  std::vector<CachedRevision> revisions;
  std::vector<SourceTelemetry> sources;

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
// spec.grants alone: the admission controller applies only these, under its own field manager.
[[nodiscard]] nlohmann::json GrantsToJson(const std::vector<StreamGrant>& grants);
[[nodiscard]] nlohmann::json PeersToJson(const std::vector<PeerSource>& peers);
[[nodiscard]] nlohmann::json HoldingsToJson(const std::vector<Holding>& holdings);
[[nodiscard]] nlohmann::json ToJson(const ModelCacheStatus& status);

}  // namespace modelplane::core::api
