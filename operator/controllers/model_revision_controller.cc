#include "operator/controllers/model_revision_controller.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/api/model_revision_validation.h"
#include "core/api/model_revocation.h"
#include "core/api/revision_digest.h"
#include "core/digest/file_set_tree.h"
#include "core/json/json_lookup.h"
#include "core/kube/builtin_types.h"
#include "core/signing/model_signature_verifier.h"
#include "core/signing/signature_time.h"
#include "core/workqueue/run_concurrently.h"
#include "operator/controllers/adapter_placement.h"
#include "operator/controllers/cache_entries.h"
#include "operator/controllers/held_copies.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

// events.k8s.io/v1 refuses a note over 1 KiB.
constexpr std::size_t kMaxEventNote = 1000;
// How soon a revision that its namespace's quota cut asks again.
constexpr std::chrono::seconds kQuotaRetry{30};

std::string StringField(const json& object, const char* key) {
  const auto value = object.find(key);
  return value != object.end() && value->is_string() ? value->get<std::string>() : std::string();
}

bool HasFinalizer(const json& metadata) {
  const auto finalizers = metadata.find("finalizers");
  if (finalizers == metadata.end() || !finalizers->is_array()) return false;
  return std::any_of(finalizers->begin(), finalizers->end(),
                     [](const json& f) { return f == kCacheEntriesFinalizer; });
}

// The previous status as written, for change detection and lastTransitionTime. A document that
// does not parse as a whole revision (a spec the CRD let through but the parser refuses) still
// has its conditions read, so an invalid revision's status settles instead of being rewritten.
std::vector<api::Condition> PreviousConditions(const json& raw,
                                               const std::optional<api::ModelRevisionStatus>& old) {
  if (old) return old->conditions;
  std::vector<api::Condition> conditions;
  if (raw.contains("status")) {
    if (auto reader = core::JsonObjectReader::Create(raw["status"], "status")) {
      if (!api::ReadConditions(*reader, conditions)) conditions.clear();
    }
  }
  return conditions;
}

// sha256 -> size of a ModelRevision's files, read straight from its JSON; empty for null.
std::map<std::string, std::int64_t> FileSizesOf(const core::ObjectPtr& revision) {
  std::map<std::string, std::int64_t> files;
  if (!revision) return files;
  const auto spec = revision->find("spec");
  if (spec == revision->end() || !spec->is_object()) return files;
  const auto list = spec->find("files");
  if (list == spec->end() || !list->is_array()) return files;
  for (const json& file : *list) {
    if (!file.is_object()) continue;
    const auto sha = file.find("sha256");
    const auto size = file.find("size");
    if (sha == file.end() || !sha->is_string() || size == file.end() ||
        !size->is_number_integer()) {
      continue;
    }
    files[sha->get<std::string>()] = std::max<std::int64_t>(0, size->get<std::int64_t>());
  }
  return files;
}

// The root a peer ticket names: the tree over the revision's file digests, as the agent builds
// it from the same list (node-agent/controller/peer_candidates.h).
core::Sha256Bytes FilesRoot(const std::map<std::string, std::int64_t>& files) {
  std::vector<core::Sha256Bytes> digests;
  for (const auto& [sha, size] : files) {
    if (auto digest = core::ParseDigest(sha)) digests.push_back(*digest);
  }
  return core::FileSetTree::Of(digests).root();
}

// status.totalBytes as this operator last wrote it; 0 when not yet.
std::int64_t TotalBytesOf(const json& revision) {
  const auto status = revision.find("status");
  if (status == revision.end() || !status->is_object()) return 0;
  const auto total = status->find("totalBytes");
  return total != status->end() && total->is_number_integer() ? total->get<std::int64_t>() : 0;
}

const api::Condition* FindCondition(const std::vector<api::Condition>& conditions,
                                    std::string_view type) {
  const auto found = std::find_if(conditions.begin(), conditions.end(),
                                  [&](const api::Condition& c) { return c.type == type; });
  return found == conditions.end() ? nullptr : &*found;
}

double UnixSeconds(const core::Clock& clock) {
  return std::chrono::duration<double>(clock.WallNow().time_since_epoch()).count();
}

}  // namespace

core::Result<core::ReconcileResult> ModelRevisionController::Reconcile(const std::string& key) {
  const core::ObjectPtr object = context_.revisions.store().Get(key);
  if (!object) {
    if (context_.quota_ledger != nullptr) context_.quota_ledger->Forget(key);
    // Gone: the finalizer saw its entries removed; ModelCacheController prunes any left by a
    // revision deleted while no operator ran. Pods may name a revision before it exists (Helm
    // creates custom resources after Deployments): they wait, gated, and are told so.
    context_.metrics.SetPhase(key, "");
    context_.metrics.rollouts().Update(key, {}, UnixSeconds(context_.clock));
    gates_.ReportBlocked(key, "Normal", "WaitingForRevision",
                         fmt::format("waiting for ModelRevision {}, which does not exist yet; "
                                     "the pod stays gated until it is created and staged",
                                     key));
    return core::ReconcileResult::Done();
  }
  const json& raw = *object;
  const json& metadata = raw.at("metadata");
  const api::RevisionReference reference{.namespace_name = StringField(metadata, "namespace"),
                                         .name = StringField(metadata, "name")};
  const bool deleting =
      metadata.contains("deletionTimestamp") && !metadata["deletionTimestamp"].is_null();
  const bool has_finalizer = HasFinalizer(metadata);

  // The finalizer goes on before the first entry is written, so no deletion can outrun it.
  if (!deleting && !has_finalizer) {
    if (auto added = SetFinalizer(raw, true); !added) return std::unexpected(added.error());
  }

  Plan plan = Observe(raw, deleting);
  if (!plan.gates && context_.quota_ledger != nullptr) {
    context_.quota_ledger->Release(key);  // invalid, revoked or deleting: it holds nothing
  }
  if (auto synced =
          SyncEntries(reference, plan.observation.digest, plan.desired, plan.proofs.proven);
      !synced) {
    return std::unexpected(synced.error());
  }
  std::optional<core::Error> gate_error;
  if (plan.rollouts) rollouts_.Report(key, *plan.rollouts);
  // Invalid, revoked and deleting revisions have no rollouts: theirs are over.
  context_.metrics.rollouts().Update(
      key, plan.rollouts ? plan.rollouts->readiness : std::vector<RolloutReadiness>{},
      UnixSeconds(context_.clock));
  if (plan.gates) {
    if (auto applied = gates_.Apply(key, *plan.gates); !applied) gate_error = applied.error();
  } else if (!deleting) {
    const bool revoked = plan.observation.revoked;
    gates_.ReportBlocked(key, "Warning",
                         revoked ? "RevisionRevoked"
                         : plan.observation.problems_reason == kReasonInvalidSpec
                             ? "RevisionInvalid"
                             : "Revision" + plan.observation.problems_reason,
                         revoked
                             ? fmt::format("ModelRevision {} is revoked; the pod stays gated", key)
                             : fmt::format("ModelRevision {} is invalid ({}); the pod stays gated",
                                           key, fmt::join(plan.observation.problems, "; ")));
  }
  if (deleting) {
    if (has_finalizer) {
      if (auto removed = SetFinalizer(raw, false); !removed)
        return std::unexpected(removed.error());
      context_.logger.Info("revision_finalized", {{"revision", key}});
    }
    context_.metrics.SetPhase(key, "");
    return core::ReconcileResult::Done();
  }

  std::optional<api::ModelRevisionStatus> old_status;
  if (auto parsed = api::ModelRevisionFromJson(raw); parsed) old_status = parsed->status;
  const std::vector<api::Condition> previous = PreviousConditions(raw, old_status);
  const api::ModelRevisionStatus status = BuildRevisionStatus(
      plan.observation, previous,
      std::chrono::time_point_cast<std::chrono::microseconds>(context_.clock.WallNow()));
  if (!old_status || *old_status != status) {
    if (auto written = WriteStatus(raw, status); !written) return std::unexpected(written.error());
    RecordWarning(raw, kConditionValid, status, previous);
    RecordWarning(raw, kConditionWithinQuota, status, previous);
  }
  context_.metrics.SetPhase(key, status.phase);
  if (gate_error) return std::unexpected(*gate_error);
  // A rollback window or a pin's time-to-live that ends must unpin even if nothing else
  // changes by then; a revision the quota cut asks again, since others may have shrunk.
  std::optional<std::chrono::nanoseconds> wait;
  for (const std::optional<api::Timestamp>& change :
       {plan.rollouts ? plan.rollouts->plan.next_change : std::nullopt, plan.quota.next_lapse}) {
    if (!change) continue;
    const std::chrono::nanoseconds left = *change - context_.clock.WallNow();
    wait = std::min(wait.value_or(left), left);
  }
  if (plan.quota.refusals && !plan.quota.refusals->empty()) {
    wait = std::min<std::chrono::nanoseconds>(wait.value_or(kQuotaRetry), kQuotaRetry);
  }
  if (wait) {
    return core::ReconcileResult::RequeueAfter(
        std::max<std::chrono::nanoseconds>(*wait, std::chrono::seconds(1)));
  }
  return core::ReconcileResult::Done();
}

ModelRevisionController::Plan ModelRevisionController::Observe(const json& raw, bool deleting) {
  Plan plan;
  RevisionObservation& observation = plan.observation;
  const json& metadata = raw.at("metadata");
  observation.generation = metadata.value("generation", std::int64_t{0});
  auto revision = api::ModelRevisionFromJson(raw);
  if (!revision) {
    observation.problems = {revision.error().message()};
    return plan;
  }
  const api::ModelRevisionSpec& spec = revision->spec;
  for (const api::ValidationProblem& problem : api::ValidateModelRevisionSpec(spec)) {
    observation.problems.push_back(fmt::format("{}: {} ({})", problem.path, problem.message,
                                               api::ValidationReasonName(problem.reason)));
  }
  if (!observation.problems.empty()) return plan;
  if (auto allowed = core::AuthorizeSources(context_.source_policy,
                                            revision->metadata.namespace_name, spec.sources);
      !allowed) {
    observation.problems = {allowed.error().message()};
    observation.problems_reason = std::string(kReasonSourcePolicyDenied);
    return plan;
  }
  auto signed_by = core::VerifyModelSignatures(
      context_.source_policy ? &context_.source_policy->signatures : nullptr,
      revision->metadata.namespace_name, spec,
      core::SignatureTime(*revision, context_.clock.WallNow()));
  if (!signed_by) {
    observation.problems = {signed_by.error().message};
    observation.problems_reason = signed_by.error().reason;
    return plan;
  }
  observation.signed_by = std::move(*signed_by);
  auto digest = api::ComputeRevisionDigest(spec);
  if (!digest) {
    observation.problems = {digest.error().message()};
    return plan;
  }
  observation.digest = *digest;
  for (const api::ModelFile& file : spec.files) observation.total_bytes += file.size;
  observation.revoked_by = RevokedBy(*revision, observation.digest, observation.signed_by);
  observation.revoked = spec.revoked || observation.revoked_by.has_value();
  observation.requested_nodes = spec.prestage ? spec.prestage->nodes : 0;
  if (observation.revoked && !deleting) {
    observation.held = HeldCopiesOf(context_.caches.store(), observation.digest);
  }
  if (deleting || observation.revoked) return plan;

  const std::string key = core::ObjectStore::KeyOf(raw);
  plan.proofs = ObserveSourceProofs(
      context_.caches.store(), context_.parsed_caches, observation.digest,
      {.namespace_name = revision->metadata.namespace_name, .name = revision->metadata.name});
  const std::vector<PrestageCandidate> candidates = Candidates(
      key, observation.digest,
      spec.prestage ? spec.prestage->node_selector : std::map<std::string, std::string>{},
      plan.proofs);
  if (observation.requested_nodes > 0) {
    const PrestageChoice placed =
        ChoosePrestageNodes({.node_selector = spec.prestage->node_selector,
                             .nodes = observation.requested_nodes,
                             .total_bytes = observation.total_bytes},
                            candidates);
    for (const std::string& node : placed.chosen) {
      plan.desired[node] = {.reason = std::string(api::kReasonPrestage)};
    }
    observation.ineligible_nodes = placed.ineligible;
  }
  // Workloads rolling to it stage it where their pods run; those rolling away pin it there.
  plan.rollouts =
      rollouts_.Plan(key, *revision, observation.total_bytes, candidates, observation.digest);
  for (const auto& [node, intent] : plan.rollouts->plan.nodes) {
    plan.desired[node] = {
        .reason = intent.reason, .pinned = intent.pinned, .pinned_until = intent.pinned_until};
  }
  observation.workloads = plan.rollouts->plan.workloads;
  // Nodes that run a pod of the revision keep it, and waiting pods get nodes to stage it on;
  // in-use says the most, and a pin stays.
  plan.gates = gates_.Plan(key, observation.digest, observation.total_bytes, candidates,
                           plan.rollouts->held_pods);
  for (const std::vector<std::string>* nodes :
       {&plan.gates->bound_nodes, &plan.gates->plan.staging_nodes}) {
    for (const std::string& node : *nodes) {
      plan.desired[node].reason = std::string(api::kReasonInUse);
    }
  }
  // An adapter goes where its base is, with the base's pin; its own asks above still count.
  if (spec.base) {
    for (auto& [node, intent] : EntriesBesideBase(
             context_.revisions.store(), context_.caches.store(), context_.parsed_caches,
             revision->metadata.namespace_name, spec.base->digest)) {
      EntryIntent& desired = plan.desired[node];
      if (desired.reason.empty()) desired.reason = intent.reason;
      if (intent.pinned && !desired.pinned) {
        desired.pinned = true;
        desired.pinned_until = intent.pinned_until;
      }
    }
  }
  // Pods are never cut; what it asks for beyond them must fit its namespace's quotas.
  plan.quota = ApplyRevisionQuota(context_, *revision, observation.digest, observation.total_bytes,
                                  candidates, plan.desired);
  observation.quota_refusals = plan.quota.refusals;
  ObserveNodes(plan);
  PlanPeers(plan, key);
  return plan;
}

void ModelRevisionController::PlanPeers(Plan& plan, const std::string& key) {
  const std::string& digest = plan.observation.digest;
  // The revision itself (every file), and revisions that share some of its files.
  const std::map<std::string, std::int64_t> files =
      FileSizesOf(context_.revisions.store().Get(key));
  std::map<std::string, std::set<std::string>> shared;  // other digest -> files of this one
  for (const auto& [sha, size] : files) {
    for (const core::ObjectPtr& other : context_.revisions.store().ByIndex(kRevisionsByFile, sha)) {
      const std::string other_digest = core::StringMember(*other, {"status", "digest"});
      if (!other_digest.empty() && other_digest != digest) shared[other_digest].insert(sha);
    }
  }
  std::vector<PeerHolder> holders;
  const auto add_holders = [&](const std::string& held_digest, const std::set<std::string>& part) {
    ForEachHeldEntry(
        context_.caches.store(), context_.parsed_caches, held_digest,
        [&](const api::ModelCache& cache, const api::CachedRevision& cached) {
          const bool ready = cached.state == api::kCacheStateReady;
          if (!ready && cached.state != api::kCacheStateStaging &&
              cached.state != api::kCacheStatePending) {
            return;
          }
          holders.push_back({.node = cache.metadata.name,
                             .endpoint = cache.status->peer_endpoint,
                             .zone = cache.status->zone,
                             .ready = ready,
                             .files = part.size() == files.size()
                                          ? std::vector<std::string>{}
                                          : std::vector<std::string>(part.begin(), part.end())});
        });
  };
  add_holders(digest, {});
  for (const auto& [other_digest, part] : shared) add_holders(other_digest, part);
  if (holders.empty()) return;
  const PeerChoice choice(holders);
  std::optional<core::Sha256Bytes> files_root;  // for tickets, computed once when first needed
  std::map<std::string, const DesiredNodeState*> states;
  for (const DesiredNodeState& state : plan.observation.nodes) states[state.node] = &state;
  for (auto& [node, intent] : plan.desired) {
    const auto state = states.find(node);
    if (state != states.end() && state->second->cached &&
        state->second->cached->state == api::kCacheStateReady) {
      continue;  // holds it: reads nothing, and its entry stops changing
    }
    std::string zone;
    std::vector<api::PeerSource> previous;  // what the entry lists now: the choice is sticky
    std::string previous_ticket;
    if (const core::ObjectPtr cache_object = context_.caches.store().Get(node)) {
      const auto cache = context_.parsed_caches.Get(cache_object);
      if (*cache && (*cache)->status) zone = (*cache)->status->zone;
      if (*cache) {
        for (const api::DesiredRevision& entry : (*cache)->spec.revisions) {
          if (RevisionKey(entry.revision) != key) continue;
          previous = entry.peers;
          previous_ticket = entry.peer_ticket;
        }
      }
    }
    intent.peers = choice.Choose(node, zone, previous);
    if (context_.peer_tickets == nullptr || intent.peers.empty()) continue;
    if (!files_root) files_root = FilesRoot(files);
    auto ticket = context_.peer_tickets->TicketFor(node, *files_root, previous_ticket,
                                                   context_.clock.WallNow());
    if (!ticket) {
      // Without one the node reads from its sources instead; nothing else depends on it.
      context_.logger.Warn(
          "peer_ticket_failed",
          {{"revision", key}, {"node", node}, {"error", ticket.error().ToString()}});
      continue;
    }
    intent.peer_ticket = std::move(*ticket);
  }
}

std::optional<api::RevokedBy> ModelRevisionController::RevokedBy(
    const api::ModelRevision& revision, const std::string& digest,
    const std::vector<api::SignedBy>& signed_by) const {
  const auto revision_digest = core::ParseDigest(digest);
  if (!revision_digest) return std::nullopt;
  std::vector<api::ModelRevocation> revocations;
  for (const core::ObjectPtr& object : context_.revocations.store().List()) {
    auto revocation = api::ModelRevocationFromJson(*object);
    if (!revocation) {
      // The CRD's schema refuses a malformed digest; anything else is not ours to act on.
      context_.logger.Warn("revocation_skipped", {{"revocation", core::ObjectStore::KeyOf(*object)},
                                                  {"error", revocation.error().ToString()}});
      continue;
    }
    revocations.push_back(std::move(*revocation));
  }
  const api::ModelRevocation* first =
      api::CoveringRevocation(revocations, *revision_digest, revision.spec, signed_by);
  if (first == nullptr) return std::nullopt;
  return api::RevokedBy{
      .name = first->metadata.name, .reason = first->spec.reason, .force = first->spec.force};
}

void ModelRevisionController::ObserveNodes(Plan& plan) {
  RevisionObservation& observation = plan.observation;
  for (const auto& [node, intent] : plan.desired) {
    DesiredNodeState state{.node = node};
    if (const core::ObjectPtr cache_object = context_.caches.store().Get(node)) {
      if (const auto cache = context_.parsed_caches.Get(cache_object); *cache && (*cache)->status) {
        for (const api::CachedRevision& cached : (*cache)->status->revisions) {
          if (cached.digest == observation.digest) {
            state.cached = api::EntryForRevision(cached, node, plan.proofs);
          }
        }
      }
    }
    observation.nodes.push_back(std::move(state));
  }
}

std::vector<PrestageCandidate> ModelRevisionController::Candidates(
    const std::string& key, const std::string& digest,
    const std::map<std::string, std::string>& node_selector, const api::SourceProofs& proofs) {
  std::vector<PrestageCandidate> candidates;
  // This revision's files, and what other digests hold of them (stores are content-addressed).
  const std::map<std::string, std::int64_t> files =
      FileSizesOf(context_.revisions.store().Get(key));
  std::map<std::string, std::int64_t> shared_bytes;  // by digest
  const auto held_through = [&](const std::string& other) -> std::int64_t {
    if (files.empty() || other == digest) return 0;
    if (auto known = shared_bytes.find(other); known != shared_bytes.end()) return known->second;
    std::int64_t bytes = 0;
    const auto holders = context_.revisions.store().ByIndex(kRevisionsByDigest, other);
    if (!holders.empty()) {
      for (const auto& [sha, size] : FileSizesOf(holders.front())) {
        if (files.contains(sha)) bytes += files.at(sha);
      }
    }
    return shared_bytes[other] = bytes;
  };
  for (const core::ObjectPtr& node_object : context_.nodes.store().List()) {
    const auto parsed_node = context_.parsed_nodes.Get(node_object);
    if (!*parsed_node) continue;
    const core::Node& node = **parsed_node;
    // Only nodes whose ModelCache exists can be written to; ModelCacheController creates it,
    // and its add event brings this revision back.
    const core::ObjectPtr cache_object = context_.caches.store().Get(node.metadata.name);
    if (!cache_object) continue;
    PrestageCandidate candidate{.name = node.metadata.name,
                                .labels = LabelsPrestageReads(node.metadata.labels, node_selector),
                                .ready = node.ready,
                                .unschedulable = node.unschedulable};
    const auto parsed_cache = context_.parsed_caches.Get(cache_object);
    if (!*parsed_cache) {
      context_.logger.Warn("model_cache_unreadable", {{"cache", node.metadata.name},
                                                      {"error", parsed_cache->error().message()}});
      continue;
    }
    const api::ModelCache* cache = &**parsed_cache;
    // Digests the agent already counts in used (Ready) or reserved (Staging) bytes.
    std::set<std::string> counted_by_agent;
    if (cache->status) {
      candidate.capacity_bytes = cache->status->capacity_bytes;
      candidate.used_bytes = cache->status->used_bytes;
      candidate.reserved_bytes = cache->status->reserved_bytes;
      for (const api::CachedRevision& cached : cache->status->revisions) {
        if (cached.state == api::kCacheStateReady || cached.state == api::kCacheStateStaging) {
          counted_by_agent.insert(cached.digest);
        }
        if (cached.state == api::kCacheStateReady) {
          candidate.held_bytes += held_through(cached.digest);
        }
        if (cached.digest != digest) continue;
        // Held for another revision of the digest is not held for this one until its own
        // sources are shown to serve the bytes (source_proofs.h).
        const std::string state = api::EntryForRevision(cached, node.metadata.name, proofs).state;
        if (state == api::kCacheStateReady) {
          candidate.held = HeldState::kReady;
        } else if (state == api::kCacheStateStaging || state == api::kCacheStatePending) {
          candidate.held = HeldState::kStaging;
        }
      }
    }
    for (const api::DesiredRevision& entry : cache->spec.revisions) {
      const std::string entry_key = RevisionKey(entry.revision);
      if (entry_key == key) {
        candidate.currently_chosen = true;
        continue;
      }
      ++candidate.assigned_entries;
      if (!counted_by_agent.insert(entry.digest).second) continue;  // counted, or seen already
      if (const core::ObjectPtr other = context_.revisions.store().Get(entry_key)) {
        candidate.assigned_bytes += TotalBytesOf(*other);
      }
    }
    std::int64_t total = 0;
    for (const auto& [sha, size] : files) total += size;
    // Two revisions on the node can share a file: never count more than the revision has.
    candidate.held_bytes = std::min(candidate.held_bytes, total);
    candidates.push_back(std::move(candidate));
  }
  return candidates;
}

core::Status ModelRevisionController::SyncEntries(const api::RevisionReference& reference,
                                                  const std::string& digest,
                                                  const std::map<std::string, EntryIntent>& desired,
                                                  bool sources_proven) {
  const std::string key = RevisionKey(reference);
  std::set<std::string> targets;
  for (const auto& [node, intent] : desired) targets.insert(node);
  for (const core::ObjectPtr& cache : context_.caches.store().ByIndex(kCachesByRevision, key)) {
    targets.insert((*cache)["metadata"].value("name", ""));
  }
  const std::vector<std::string> names(targets.begin(), targets.end());
  std::mutex first_error_mutex;
  std::optional<core::Error> first_error;
  // One write per node, several at once: done one after another on a busy API server, the
  // last of 32 nodes started staging half a minute after the first.
  core::RunConcurrently(names.size(), core::kConcurrentApiWrites, [&](std::size_t index) {
    const std::string& name = names[index];
    const auto wanted = desired.find(name);
    const bool want = wanted != desired.end();
    api::DesiredRevision entry{.revision = reference, .digest = digest};
    if (want) {
      entry.pinned = wanted->second.pinned;
      entry.reason = wanted->second.reason;
      entry.peers = wanted->second.peers;
      entry.peer_ticket = wanted->second.peer_ticket;
      entry.sources_proven = sources_proven;
      // Seconds, as the API server keeps them: an unchanged pin compares equal when read back.
      if (wanted->second.pinned_until) {
        entry.pinned_until = std::chrono::floor<std::chrono::seconds>(*wanted->second.pinned_until);
      }
    }
    auto written =
        UpdateCacheEntries(context_.client, context_.latest_caches, context_.caches.store(), name,
                           [&](const std::vector<api::DesiredRevision>& entries) {
                             return ReplaceEntry(entries, reference, want ? &entry : nullptr);
                           });
    if (!written) {
      // The runner logs the first error as reconcile_failed; the rest are detail.
      context_.logger.Debug(
          "cache_entry_write_failed",
          {{"revision", key}, {"cache", name}, {"error", written.error().ToString()}});
      const std::lock_guard lock(first_error_mutex);
      if (!first_error) first_error = written.error();
      return;
    }
    if (*written) {
      context_.logger.Info(want ? "cache_entry_written" : "cache_entry_removed",
                           {{"revision", key}, {"cache", name}, {"digest", digest}});
    }
  });
  if (first_error) return std::unexpected(*first_error);
  return core::Ok();
}

core::Status ModelRevisionController::SetFinalizer(const json& raw, bool present) {
  json updated = raw;
  json& metadata = updated["metadata"];
  json finalizers = json::array();
  if (metadata.contains("finalizers") && metadata["finalizers"].is_array()) {
    for (const json& finalizer : metadata["finalizers"]) {
      if (finalizer != kCacheEntriesFinalizer) finalizers.push_back(finalizer);
    }
  }
  if (present) finalizers.push_back(kCacheEntriesFinalizer);
  metadata["finalizers"] = std::move(finalizers);
  updated.erase("status");
  auto written = context_.client.Update(core::resources::ModelRevisions(), updated);
  if (!written && written.error().code() != core::ErrorCode::kNotFound) {
    return std::unexpected(written.error());
  }
  return core::Ok();
}

core::Status ModelRevisionController::WriteStatus(const json& raw,
                                                  const api::ModelRevisionStatus& status) {
  const json& metadata = raw.at("metadata");
  const std::string ns = StringField(metadata, "namespace");
  const std::string name = StringField(metadata, "name");
  const json patch = {{"apiVersion", api::kApiVersion},
                      {"kind", api::kModelRevisionKind},
                      {"metadata", {{"name", name}, {"namespace", ns}}},
                      {"status", api::ToJson(status)}};
  auto written = context_.client.Patch(
      core::resources::ModelRevisions(), ns, name, core::PatchType::kApply, patch,
      {.field_manager = std::string(kFieldManager), .force = true, .subresource = "status"});
  if (!written && written.error().code() != core::ErrorCode::kNotFound) {
    return std::unexpected(written.error());
  }
  return core::Ok();
}

void ModelRevisionController::RecordWarning(const json& raw, std::string_view type,
                                            const api::ModelRevisionStatus& status,
                                            const std::vector<api::Condition>& previous) {
  const api::Condition* now = FindCondition(status.conditions, type);
  if (now == nullptr || now->status != api::kConditionFalse) return;
  const api::Condition* before = FindCondition(previous, type);
  if (before != nullptr && before->status == now->status && before->message == now->message) {
    return;  // already reported
  }
  const std::string key = core::ObjectStore::KeyOf(raw);
  context_.logger.Warn(type == kConditionValid ? "revision_invalid" : "revision_condition_false",
                       {{"revision", key},
                        {"condition", std::string(type)},
                        {"reason", now->reason},
                        {"message", now->message}});
  std::string note = now->message;
  if (note.size() > kMaxEventNote) note = note.substr(0, kMaxEventNote - 3) + "...";
  if (auto recorded = context_.events.Record(raw, "Warning", now->reason,
                                             type == kConditionValid ? "Validate" : "Plan", note);
      !recorded) {
    context_.logger.Warn("event_record_failed",
                         {{"revision", key}, {"error", recorded.error().ToString()}});
  }
}

}  // namespace modelplane::controller
