#include "node-agent/controller/node_controller.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/api/limits.h"
#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/model_revocation.h"
#include "core/api/object_key.h"
#include "core/api/timestamp.h"
#include "core/kube/api_status.h"
#include "core/kube/builtin_types.h"
#include "core/kube/resource_type.h"
#include "core/signing/model_signature_verifier.h"
#include "core/signing/signature_time.h"
#include "core/workqueue/rate_limiter.h"
#include "node-agent/controller/node_demand.h"
#include "node-agent/controller/peer_candidates.h"
#include "node-agent/controller/pod_readiness.h"
#include "node-agent/controller/requeue_plan.h"
#include "node-agent/controller/retention_facts.h"
#include "node-agent/controller/revision_entries.h"

namespace modelplane::agent {
namespace {

using nlohmann::json;

constexpr char kKey[] = "node";

// The status of a ModelCache object in ToJson's form (null when it has none), so that what the
// server holds compares with what this agent computes field by field, not by representation.
json NormalizedStatus(const core::api::ModelCache& cache) {
  return cache.status ? core::api::ToJson(*cache.status) : json();
}

}  // namespace

NodeController::NodeController(Dependencies dependencies, NodeControllerOptions options)
    : dependencies_(dependencies),
      options_(std::move(options)),
      logger_(dependencies.logger.WithComponent("node-agent.controller")),
      // Its own ModelCache only: what the operator wants here, whom to read from, what the
      // fleet knows of what it holds. Nothing else in the fleet reaches this agent.
      caches_(dependencies.client, dependencies.watcher,
              {.type = core::resources::ModelCaches(),
               .field_selector = "metadata.name=" + options_.node_name,
               .resync_period = options_.resync_period},
              dependencies.clock),
      pods_(dependencies.client, dependencies.watcher,
            {.type = core::resources::Pods(),
             .field_selector = "spec.nodeName=" + options_.node_name,
             .resync_period = options_.resync_period},
            dependencies.clock),
      queue_(core::MakeDefaultControllerRateLimiter(dependencies.clock), dependencies.clock),
      runner_(
          queue_,
          [this](const std::string&) {
            auto result = Reconcile();
            CountReconcile(result);
            return result;
          },
          1,
          [this](const std::string&, const core::Error& error) {
            logger_.Warn("reconcile_failed", {{"error", error.ToString()}});
          }) {
  if (dependencies_.metrics != nullptr) {
    auto family = dependencies_.metrics->AddCounter(
        {.name = "modelplane_agent_reconcile_total",
         .help = "Passes of the node agent's loop, by result (success, requeue, error).",
         .label_names = {"result"}});
    if (family) {
      reconciles_ = *family;
    } else {
      logger_.Warn("metrics_registration_failed", {{"error", family.error().ToString()}});
    }
  }
  caches_.AddHandlers(
      {.on_add = [this](const core::ObjectPtr&) { Poke(); },
       .on_update = [this](const core::ObjectPtr&, const core::ObjectPtr&) { Poke(); },
       .on_delete = [this](const core::ObjectPtr&) { Poke(); }});
  // The pod informer lists only this node's pods.
  pods_.AddHandlers(
      {.on_add = [this](const core::ObjectPtr&) { Poke(); },
       .on_update = [this](const core::ObjectPtr&, const core::ObjectPtr&) { Poke(); },
       .on_delete = [this](const core::ObjectPtr&) { Poke(); }});
}

void NodeController::CountReconcile(const core::Result<core::ReconcileResult>& result) const {
  if (reconciles_ == nullptr) return;
  const char* outcome = !result ? "error" : result->requeue_after ? "requeue" : "success";
  if (auto counter = reconciles_->WithLabels({outcome})) counter->Increment();
}

NodeController::~NodeController() {
  Stop();
}

void NodeController::Poke() {
  queue_.Add(kKey);
}

bool NodeController::Start(core::CancellationToken& stop) {
  caches_.Start();
  pods_.Start();
  if (!core::WaitForCacheSync({&caches_, &pods_}, stop, dependencies_.clock)) return false;
  if (auto created = EnsureCacheExists(); !created) {
    logger_.Warn("modelcache_create_failed",
                 {{"node", options_.node_name}, {"error", created.error().ToString()}});
  }
  runner_.Start();
  Poke();
  logger_.Info("controller_started", {{"node", options_.node_name}});
  return true;
}

void NodeController::Stop() {
  runner_.Stop();
  pods_.Stop();
  caches_.Stop();
}

core::Status NodeController::EnsureCacheExists() {
  if (caches_.store().Get(options_.node_name)) return core::Ok();
  // The operator creates ModelCaches as nodes appear; an agent that starts first makes its own
  // rather than wait, and the operator adopts it (sets the Node as its owner).
  const json object = {{"apiVersion", core::api::kApiVersion},
                       {"kind", core::api::kModelCacheKind},
                       {"metadata", {{"name", options_.node_name}}},
                       {"spec", {{"revisions", json::array()}}}};
  auto created = dependencies_.client.Create(core::resources::ModelCaches(), "", object);
  if (!created && created.error().code() != core::ErrorCode::kAlreadyExists) {
    return std::unexpected(created.error());
  }
  return core::Ok();
}

RevisionStatus NodeController::ResolveRevision(std::string_view namespace_name,
                                               std::string_view name) const {
  RevisionStatus status;
  // Read now, not from the loop's copy: a mount must see a revocation at once, and mounts are
  // rare next to the loop's passes. While the API server cannot answer, what the loop read
  // last still lets a pod mount what this node holds (holdings' revocation included).
  auto object = dependencies_.client.Get(core::resources::ModelRevisions(),
                                         std::string(namespace_name), std::string(name));
  if (!object && object.error().code() != core::ErrorCode::kNotFound) {
    const std::lock_guard lock(revoked_mutex_);
    if (auto known = last_read_.find(core::api::ObjectKey(namespace_name, name));
        known != last_read_.end()) {
      logger_.Warn("revision_resolved_from_last_read",
                   {{"revision", known->first}, {"error", object.error().ToString()}});
      object = *known->second;
    }
  }
  if (!object) {
    status.problem = object.error().code() == core::ErrorCode::kNotFound
                         ? std::string("not found")
                         : "not read: " + object.error().message();
    return status;
  }
  auto parsed = core::api::ModelRevisionFromJson(*object);
  auto loaded = parsed ? CheckRevision(std::move(*parsed))
                       : core::Result<LoadedRevision>(std::unexpected(parsed.error()));
  if (!loaded) {
    status.problem = "invalid: " + loaded.error().message();
    return status;
  }
  // Signatures as the loop's index checks them: bytes held for another namespace's revision do
  // not make this one mountable.
  if (auto signed_by = core::VerifyModelSignatures(
          options_.source_policy ? &options_.source_policy->signatures : nullptr,
          loaded->revision.metadata.namespace_name, loaded->revision.spec,
          core::SignatureTime(loaded->revision, dependencies_.clock.WallNow()));
      !signed_by) {
    status.problem =
        fmt::format("invalid: {}: {}", signed_by.error().reason, signed_by.error().message);
    return status;
  }
  status.known = true;
  status.digest = loaded->digest;
  status.revoked = core::api::IsRevoked(loaded->revision) || RevokedHere(loaded->digest);
  // Bytes held for another revision of the digest serve this one only once its own sources
  // were shown to serve them (docs/security.md, "Bytes shared across namespaces").
  status.ready_here = dependencies_.store.FindRevision(loaded->digest).has_value() &&
                      SourcesProvenHere(core::api::ObjectKey(namespace_name, name), loaded->digest);
  return status;
}

bool NodeController::SourcesProvenHere(const std::string& key,
                                       const core::Sha256Bytes& digest) const {
  if (ledger_ != nullptr && ledger_->Contains(digest, key)) return true;
  const std::lock_guard lock(revoked_mutex_);
  const auto proven = proven_by_fleet_.find(key);
  return proven != proven_by_fleet_.end() && proven->second == core::FormatDigest(digest);
}

bool NodeController::RevisionsSynced() const {
  return caches_.HasSynced() && pods_.HasSynced();
}

void NodeController::ObserveSourceProof(WantedRevisionFacts& fact) {
  const core::Sha256Bytes& digest = fact.indexed->loaded->digest;
  if (ledger_ != nullptr && fact.manifest && fact.staged && fact.staged->revision_key == fact.key &&
      StagedFromOwnSources(*fact.staged) && !ledger_->Contains(digest, fact.key)) {
    if (auto recorded = ledger_->Record(digest, fact.key); !recorded) {
      logger_.Warn("possession_ledger_write_failed",
                   {{"revision", fact.key}, {"error", recorded.error().ToString()}});
    }
  }
  const bool proven_here = ledger_ != nullptr && ledger_->Contains(digest, fact.key);
  fact.sources_proven = proven_here || (fact.wanted->sources_proven &&
                                        fact.wanted->digest_hint == core::FormatDigest(digest));
  const core::api::RevisionReference& reference = fact.wanted->reference;
  if (proven_here) {
    fact.proof = core::api::SourceProof{.revision = reference,
                                        .state = std::string(core::api::kProofStateProven)};
  } else if (prover_ != nullptr) {
    if (auto state = prover_->State(digest, fact.key);
        state && state->phase == PossessionState::Phase::kFailed) {
      fact.proof = core::api::SourceProof{.revision = reference,
                                          .state = std::string(core::api::kProofStateFailed),
                                          .reason = state->reason,
                                          .message = state->message};
    }
  }
}

bool NodeController::RevokedHere(const core::Sha256Bytes& digest) const {
  const std::lock_guard lock(revoked_mutex_);
  return revoked_here_.contains(digest);
}

core::Result<NodeController::AppliedStatus> NodeController::ApplyStatus(const json& status) {
  const json body = {{"apiVersion", core::api::kApiVersion},
                     {"kind", core::api::kModelCacheKind},
                     {"metadata", {{"name", options_.node_name}}},
                     {"status", status}};
  auto applied = dependencies_.client.Patch(
      core::resources::ModelCaches(), "", options_.node_name, core::PatchType::kApply, body,
      {.field_manager = options_.field_manager, .force = true, .subresource = "status"});
  if (!applied) return std::unexpected(applied.error());
  auto stored = core::api::ModelCacheFromJson(*applied);
  if (!stored) return std::unexpected(stored.error().Wrap("reading the applied ModelCache"));
  return AppliedStatus{.status = NormalizedStatus(*stored),
                       .resource_version = stored->metadata.resource_version};
}

void NodeController::RecordEvent(const core::api::ModelCache& cache, const std::string& type,
                                 const std::string& reason, const std::string& action,
                                 const std::string& note) {
  if (retention_.events == nullptr) return;
  const json regarding = {
      {"apiVersion", core::api::kApiVersion},
      {"kind", core::api::kModelCacheKind},
      {"metadata", {{"name", cache.metadata.name}, {"uid", cache.metadata.uid}}}};
  if (auto recorded = retention_.events->Record(regarding, type, reason, action, note); !recorded) {
    logger_.Warn("event_failed", {{"reason", reason}, {"error", recorded.error().ToString()}});
  }
}

core::Result<core::ReconcileResult> NodeController::Reconcile() {
  const auto now = dependencies_.clock.Now();
  const auto wall_now = dependencies_.clock.WallNow();
  const core::ObjectPtr cache_object = caches_.store().Get(options_.node_name);
  if (!cache_object) {
    if (auto created = EnsureCacheExists(); !created) return std::unexpected(created.error());
    return core::ReconcileResult::RequeueAfter(std::chrono::seconds(1));
  }
  auto cache = core::api::ModelCacheFromJson(*cache_object);
  if (!cache)
    return std::unexpected(cache.error().Wrap("reading ModelCache " + options_.node_name));
  CacheRetention* const retention = retention_.retention;
  if (dependencies_.admission != nullptr) dependencies_.admission->SetGrants(cache->spec.grants);
  index_.SetHoldings(cache->spec.holdings);
  {
    std::set<core::Sha256Bytes> revoked;
    for (const auto& [digest, holding] : index_.holdings()) {
      if (holding.revoked) revoked.insert(digest);
    }
    const std::lock_guard lock(revoked_mutex_);
    revoked_here_ = std::move(revoked);
  }
  // Progress alone is written at the operator's pace (it grows with the fleet), never faster
  // than this agent's own.
  const std::chrono::milliseconds progress_interval = std::max<std::chrono::milliseconds>(
      options_.status_interval,
      std::chrono::seconds(cache->spec.progress_interval_seconds.value_or(0)));

  // What this node should hold (node_demand.h).
  std::vector<core::Pod> pods;
  for (const core::ObjectPtr& object : pods_.store().List()) {
    if (auto pod = core::PodFromJson(*object)) pods.push_back(std::move(*pod));
  }
  NodeDemand demand =
      PlanNodeDemand(cache->spec.revisions, pods,
                     std::chrono::time_point_cast<std::chrono::microseconds>(wall_now));
  const std::vector<WantedRevision>& wanted = demand.wanted;
  const std::vector<core::Pod>& gated_pods = demand.gated_pods;
  const std::map<std::string, std::set<std::string>>& pod_users = demand.pod_users;

  if (dependencies_.apply_limits) {
    const bool serving = !pod_users.empty() || (retention_.leases && !retention_.leases().empty());
    const TransferLimits limits = LimitsWhile(serving, options_.serving);
    if (limits_ != limits) {
      dependencies_.apply_limits(limits);
      logger_.Info("transfer_limits_applied",
                   {{"serving", serving},
                    {"write_bytes_per_second", limits.write_bytes_per_second},
                    {"upload_bytes_per_second", limits.upload_bytes_per_second}});
      limits_ = limits;
    }
  }

  // The revisions this pass needs, read by name (revision_reader.h): wanted, named by a pod
  // here, or held (for names, sources and files; revocation comes through spec.holdings).
  {
    std::map<std::string, std::string> needed;
    for (const WantedRevision& item : wanted) {
      needed[core::api::ObjectKey(item.reference.namespace_name, item.reference.name)] =
          item.digest_hint;
    }
    for (const auto& [key, users] : pod_users) needed.try_emplace(key);
    for (const RevisionManifest& manifest : dependencies_.store.ListRevisions()) {
      if (manifest.name.find('/') != std::string::npos) needed.try_emplace(manifest.name);
    }
    if (auto read =
            revisions_.Sync(needed,
                            [this](const std::string& key) -> std::optional<core::Sha256Bytes> {
                              const RevisionIndex::Entry* entry = index_.Find(key);
                              if (entry == nullptr || !entry->loaded) return std::nullopt;
                              return entry->loaded->digest;
                            });
        !read) {
      logger_.Warn("revision_read_failed", {{"error", read.error().ToString()}});
    }
    const std::vector<core::ObjectPtr> read = revisions_.Objects();
    index_.Refresh(read, options_.source_policy ? &options_.source_policy->signatures : nullptr,
                   dependencies_.clock.WallNow());
    std::map<std::string, core::ObjectPtr> by_key;
    for (const core::ObjectPtr& object : read) by_key[core::ObjectStore::KeyOf(*object)] = object;
    const std::lock_guard lock(revoked_mutex_);
    last_read_ = std::move(by_key);
  }

  // Earlier status entries carry tier and timestamps across agent restarts.
  std::map<std::string, core::api::CachedRevision> previous;
  if (cache->status) {
    for (const auto& entry : cache->status->revisions) previous.emplace(entry.digest, entry);
  }

  core::api::ModelCacheStatus status;
  status.observed_generation = cache->metadata.generation;
  status.peer_endpoint = PeerEndpoint();
  status.zone = options_.zone;
  bool moving = false;
  std::optional<core::Clock::SteadyTime> next_retry;

  // Observe each wanted revision, then plan its entry (revision_entries.h).
  std::vector<WantedRevisionFacts> facts;
  facts.reserve(wanted.size());
  for (const WantedRevision& item : wanted) {
    WantedRevisionFacts& fact = facts.emplace_back();
    fact.wanted = &item;
    fact.key = core::api::ObjectKey(item.reference.namespace_name, item.reference.name);
    fact.indexed = index_.Find(fact.key);
    if (fact.indexed == nullptr || !fact.indexed->loaded) continue;
    const core::Sha256Bytes& digest = fact.indexed->loaded->digest;
    fact.digest_revoked = index_.Revoked(digest);
    fact.manifest = dependencies_.store.FindRevision(digest);
    if (stager_ != nullptr) fact.staged = stager_->State(digest);
    ObserveSourceProof(fact);
  }
  WantedRevisionsPlan plan = PlanWantedRevisions(facts, previous);
  std::map<std::string, core::api::CachedRevision>& entries = plan.entries;
  {
    std::map<std::string, std::string> proven_by_fleet;
    for (const WantedRevision& item : wanted) {
      if (item.sources_proven) {
        proven_by_fleet[core::api::ObjectKey(item.reference.namespace_name, item.reference.name)] =
            item.digest_hint;
      }
    }
    const std::lock_guard lock(revoked_mutex_);
    proven_by_fleet_ = std::move(proven_by_fleet);
  }
  // Held revisions whose own sources are not yet shown to serve the bytes: a few random ranges
  // read from those sources must match what the node holds (possession_prover.h).
  std::set<PossessionProver::Key> still_to_prove;
  for (const ProofCandidate& candidate : plan.to_prove) {
    if (prover_ == nullptr) break;
    still_to_prove.emplace(candidate.loaded->digest, candidate.key);
    prover_->Want(*candidate.loaded);
    if (auto proving = prover_->State(candidate.loaded->digest, candidate.key);
        proving && proving->phase == PossessionState::Phase::kProving) {
      moving = true;
    }
    if (auto again = prover_->RetryAt(candidate.loaded->digest, candidate.key)) {
      next_retry = next_retry ? std::min(*next_retry, *again) : *again;
    }
  }
  if (prover_ != nullptr) prover_->Keep(still_to_prove);

  // Everything retention must weigh: what the store holds, what is wanted, what is revoked and
  // still has bytes here.
  if (retention != nullptr) {
    const std::vector<VolumeLease> leases =
        retention_.leases ? retention_.leases() : std::vector<VolumeLease>{};
    retention->BeginPass(CollectRetentionFacts({.index = index_,
                                                .store = dependencies_.store,
                                                .stager = stager_,
                                                .leases = leases,
                                                .pod_users = pod_users,
                                                .wanted = plan.wanted_pins}));
  }

  const std::string self_endpoint = PeerEndpoint();

  // Stagings in priority order, each admitted only if it fits (retention).
  std::set<core::Sha256Bytes> refused_now;
  std::set<core::Sha256Bytes> failed_now;
  for (const StagingCandidate& item : plan.to_stage) {
    const LoadedRevision& loaded = *item.loaded;
    core::api::CachedRevision& entry = entries[core::FormatDigest(loaded.digest)];
    if (stager_ == nullptr) continue;
    auto staged = stager_->State(loaded.digest);
    const bool active = staged && (staged->phase == StagingPhase::kQueued ||
                                   staged->phase == StagingPhase::kStaging);
    const auto retry = stager_->RetryAt(loaded.digest);
    const bool backing_off = retry && now < *retry;
    if (retention != nullptr && active && staged->phase == StagingPhase::kQueued) {
      retention->AddPendingBytes(dependencies_.store.BytesToStage(SpecFiles(loaded)));
    }
    // A refusal is reported once (log and Event), and stays in status while it holds.
    auto refuse = [&](std::string_view reason, std::string message) {
      entry.state = core::api::kCacheStateFailed;
      entry.reason = reason;
      entry.message = std::move(message);
      refused_now.insert(loaded.digest);
      if (refused_.contains(loaded.digest)) return;
      logger_.Warn("staging_refused", {{"revision", item.key},
                                       {"digest", entry.digest},
                                       {"reason", entry.reason},
                                       {"message", entry.message}});
      RecordEvent(*cache, "Warning", entry.reason, "Stage",
                  fmt::format("ModelRevision {} ({}) is not staged: {}", item.key, entry.digest,
                              entry.message));
    };
    // The policy is checked before anything is admitted or read; the source factory checks it
    // again, so nothing reaches a source without it.
    if (auto allowed = core::AuthorizeSources(
            options_.source_policy ? &*options_.source_policy : nullptr,
            loaded.revision.metadata.namespace_name, loaded.revision.spec.sources);
        !allowed) {
      if (active) stager_->Forget(loaded.digest);
      refuse(core::api::kCacheReasonSourcePolicyDenied, allowed.error().message());
      continue;
    }
    if (retention != nullptr && !active && !backing_off) {
      const AdmissionDecision decision =
          retention->Admit(loaded.digest, item.reason == core::api::kReasonPrestage);
      if (decision.outcome == AdmissionDecision::Outcome::kRefuse) {
        refuse(core::api::kCacheReasonInsufficientCapacity, decision.message);
        continue;
      }
      if (decision.outcome == AdmissionDecision::Outcome::kEvictFirst) {
        entry.state = core::api::kCacheStatePending;
        entry.message = decision.message;
        moving = true;
        continue;
      }
    }
    stager_->Want(loaded);
    stager_->SetPeers(loaded.digest, PeerCandidatesFromSpec(*item.peers, *item.peer_ticket, loaded,
                                                            options_.zone, self_endpoint));
    if (auto state = stager_->State(loaded.digest)) {
      ApplyStagingState(*state, entry);
      if (state->phase == StagingPhase::kQueued || state->phase == StagingPhase::kStaging) {
        moving = true;
      }
      if (state->phase == StagingPhase::kFailed) {
        failed_now.insert(loaded.digest);
        if (auto& reported = failure_reported_[loaded.digest]; reported != state->message) {
          reported = state->message;
          RecordEvent(*cache, "Warning", state->reason.empty() ? "StagingFailed" : state->reason,
                      "Stage",
                      fmt::format("staging ModelRevision {} ({}) failed: {}", item.key,
                                  entry.digest, state->message));
        }
      }
      if (state->phase == StagingPhase::kReady) moving = true;  // the store will say Ready
      if (auto again = stager_->RetryAt(loaded.digest)) {
        next_retry = next_retry ? std::min(*next_retry, *again) : *again;
      }
    }
  }
  refused_ = std::move(refused_now);
  std::erase_if(failure_reported_,
                [&](const auto& reported) { return !failed_now.contains(reported.first); });
  // Revisions no longer wanted stop staging (their bytes stay until eviction wants the room).
  if (stager_ != nullptr) {
    for (const core::Sha256Bytes& digest : staging_wanted_) {
      if (!plan.wanted_digests.contains(digest)) stager_->Forget(digest);
    }
  }
  staging_wanted_ = std::move(plan.wanted_digests);
  const std::vector<RevisionManifest> held_revisions = dependencies_.store.ListRevisions();
  AddStoreInventory(held_revisions, previous, entries);
  if (ledger_ != nullptr) {
    // A proof stays while the node holds or wants the digest: a manifest lost and published
    // again from the blobs on disk keeps it.
    std::set<core::Sha256Bytes> kept = staging_wanted_;
    for (const RevisionManifest& manifest : held_revisions) kept.insert(manifest.revision_digest);
    if (auto retained = ledger_->Retain(kept); !retained) {
      logger_.Warn("possession_ledger_write_failed", {{"error", retained.error().ToString()}});
    }
  }

  if (retention != nullptr) {
    const RetentionSummary summary = retention->EndPass();
    const RetentionOutcome outcome = FoldRetentionSummary(summary, index_, entries);
    for (const CacheEvent& event : outcome.events) {
      RecordEvent(*cache, event.type, event.reason, event.action, event.note);
    }
    if (outcome.evicting) moving = true;
    status.high_watermark_bytes = static_cast<std::int64_t>(summary.watermarks.high);
    status.low_watermark_bytes = static_cast<std::int64_t>(summary.watermarks.low);
    status.reclaimable_bytes = static_cast<std::int64_t>(summary.reclaimable_bytes);
    status.protected_bytes = static_cast<std::int64_t>(summary.protected_bytes);
  }
  for (auto& [digest, entry] : entries) status.revisions.push_back(std::move(entry));
  const SpaceUsage usage = dependencies_.store.Usage();
  status.capacity_bytes = static_cast<std::int64_t>(usage.capacity_bytes);
  status.used_bytes = static_cast<std::int64_t>(usage.used_bytes);
  status.reserved_bytes = static_cast<std::int64_t>(usage.reserved_bytes);
  status.media_bandwidth_bytes_per_second = options_.media_bandwidth_bytes_per_second;
  if (dependencies_.telemetry != nullptr) {
    status.sources = dependencies_.telemetry->Snapshot(core::api::kMaxCacheSources);
    for (core::api::SourceTelemetry& source : status.sources) {
      if (dependencies_.admission != nullptr && source.tier != core::api::kTierPeer) {
        source.granted_streams = dependencies_.admission->Limit(source.source);
      }
    }
  }

  if (auto updated = UpdateWeightsReady(gated_pods, plan.weights, status.revisions); !updated) {
    return std::unexpected(updated.error());
  }

  const json status_json = core::api::ToJson(status);
  const StatusPacer::Decision decision =
      pacer_.Decide(status_json, NormalizedStatus(*cache), cache->metadata.resource_version, now,
                    progress_interval, options_.status_interval);
  if (decision.wait) return core::ReconcileResult::RequeueAfter(*decision.wait);
  if (decision.write) {
    auto applied = ApplyStatus(status_json);
    if (!applied) return std::unexpected(applied.error().Wrap("applying ModelCache status"));
    if (decision.overwritten) {
      logger_.Info("model_cache_status_rewritten",
                   {{"cache", options_.node_name},
                    {"why", "the stored status differed from this agent's last write"}});
    }
    pacer_.Written(status_json, std::move(applied->status), std::move(applied->resource_version),
                   now);
  }
  return PlanRequeue({.now = now,
                      .status_interval = options_.status_interval,
                      .moving = moving,
                      .status_differs_since = pacer_.differs_since(),
                      .staging_retry_at = next_retry,
                      .revision_read_retry_at = revisions_.NextRetry(),
                      .retention_interval = retention != nullptr && retention->enabled()
                                                ? std::optional(options_.retention_interval)
                                                : std::nullopt});
}

}  // namespace modelplane::agent
