// What this node's ModelCache status says of each revision, and which revisions a pass may
// stage: pure functions from what the pass observed (the revision index, the store, the stager,
// the status it wrote last, retention's summary) to status entries, weights verdicts, staging
// candidates and Events. The controller gathers the facts and acts on the result
// (node_controller.cc).
//
// A wanted revision that cannot be read is Failed with why; a revoked one is never staged and
// its gated pods' weights-ready goes False; one the store holds is Ready, with the tier and
// timestamps of the staging that published it, else of the last status, else tier local; any
// other is a staging candidate, in staging priority order (node_demand.h). A held revision whose
// own sources are not yet shown to serve its bytes stays unverified for its pods and is a proof
// candidate; its digest's entry is Ready all the same (other revisions may use it) and lists
// what each proof found.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/api/model_cache.h"
#include "core/digest/sha256.h"
#include "node-agent/controller/cache_retention.h"
#include "node-agent/controller/node_demand.h"
#include "node-agent/controller/revision_index.h"
#include "node-agent/controller/stager.h"
#include "node-agent/store/revision_manifest.h"

namespace modelplane::agent {

// What one wanted revision looks like to this node right now.
struct WantedRevisionFacts {
  const WantedRevision* wanted = nullptr;
  std::string key;                                // namespace/name
  const RevisionIndex::Entry* indexed = nullptr;  // nullptr: the revision was not found
  // The operator revoked its digest (spec.holdings); the revision's own `revoked` is read here.
  bool digest_revoked = false;
  std::optional<RevisionManifest> manifest;  // the store holds it, verified
  std::optional<StagingState> staged;        // the stager's view of its digest
  // The revision's own sources were shown to serve the bytes the store holds under its digest,
  // by this node (its possession ledger) or by another (the operator's word). Until then those
  // bytes, which may have come for another namespace's revision, do not make it Ready for pods
  // (docs/security.md, "Bytes shared across namespaces").
  bool sources_proven = false;
  // What this node found when it checked them, for status; nullopt: not checked here.
  std::optional<core::api::SourceProof> proof;
};

// Verdicts for the gated pods, by revision "namespace/name" -> digest.
struct WeightsVerdicts {
  std::map<std::string, std::string> ready;       // verified in the store
  std::map<std::string, std::string> revoked;     // weights-ready must go False
  std::map<std::string, std::string> unverified;  // valid, not (or no longer) in the store
};

struct StagingCandidate {
  std::string key;
  const LoadedRevision* loaded = nullptr;
  std::string reason;
  const std::vector<core::api::PeerSource>* peers = nullptr;
  const std::string* peer_ticket = nullptr;
};

struct ProofCandidate {
  std::string key;
  const LoadedRevision* loaded = nullptr;
};

struct WantedRevisionsPlan {
  std::map<std::string, core::api::CachedRevision> entries;  // by formatted digest
  WeightsVerdicts weights;
  std::set<core::Sha256Bytes> wanted_digests;
  std::map<core::Sha256Bytes, bool> wanted_pins;  // digest -> pinned
  std::vector<StagingCandidate> to_stage;         // in staging priority order
  // Held here, but not yet shown to be served by their own sources.
  std::vector<ProofCandidate> to_prove;
};

// `previous`: the entries of the status written last, by digest; they carry tier and timestamps
// across agent restarts.
[[nodiscard]] WantedRevisionsPlan PlanWantedRevisions(
    const std::vector<WantedRevisionFacts>& facts,
    const std::map<std::string, core::api::CachedRevision>& previous);

// Whether a staging that published read every byte from its revision's own sources (shared
// filesystem, object store, HTTP origin): none from peers, none that the node already held,
// perhaps for another namespace's revision. Such a staging proves the sources serve the bytes.
[[nodiscard]] bool StagedFromOwnSources(const StagingState& state);

// A staging's state as its status entry says it: phase, bytes, tier, times, reason, and while
// fetching the goodput and expected finish.
void ApplyStagingState(const StagingState& state, core::api::CachedRevision& entry);

// Everything else the store holds is Ready inventory the scheduler can use; an entry already in
// `entries` stays as it is.
void AddStoreInventory(const std::vector<RevisionManifest>& held,
                       const std::map<std::string, core::api::CachedRevision>& previous,
                       std::map<std::string, core::api::CachedRevision>& entries);

// An Event the controller records on its ModelCache.
struct CacheEvent {
  std::string type;  // Normal or Warning
  std::string reason;
  std::string action;
  std::string note;
};

struct RetentionOutcome {
  bool evicting = false;  // something is being evicted: the loop looks again at the status pace
  std::vector<CacheEvent> events;  // evictions and purges that finished since the last pass
};

// Folds retention's summary of the pass into the entries: unique bytes, protection and last use
// for every revision it accounts for; Evicting (with its reason) for those the evictor has, and
// for a revoked remnant its bytes still on disk; a revision neither listed nor evicting is not
// reported. `index` gives the size of a revision held without a manifest any more.
[[nodiscard]] RetentionOutcome FoldRetentionSummary(
    const RetentionSummary& summary, const RevisionIndex& index,
    std::map<std::string, core::api::CachedRevision>& entries);

[[nodiscard]] core::api::StageTimestamps ToStageTimestamps(const StageTimes& times);
// Bytes per tier as status writes them: tiers that gave nothing are left out.
[[nodiscard]] std::map<std::string, std::int64_t> TierBytes(
    const std::map<std::string, std::uint64_t>& bytes);

}  // namespace modelplane::agent
