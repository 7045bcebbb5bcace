#include "operator/controllers/controller_manager.h"

#include <algorithm>
#include <tuple>

#include "core/api/model_cache.h"
#include "core/api/object_key.h"
#include "core/json/json_lookup.h"
#include "core/kube/builtin_types.h"
#include "core/workqueue/rate_limiter.h"
#include "operator/controllers/adapter_placement.h"
#include "operator/controllers/cache_entries.h"
#include "operator/controllers/holdings.h"
#include "operator/gating/serving_pods.h"
#include "operator/rollouts/workload.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

core::InformerOptions InformerFor(core::ResourceType type, std::string namespace_name,
                                  std::chrono::seconds resync) {
  return {.type = std::move(type),
          .namespace_name = std::move(namespace_name),
          .resync_period = resync};
}

std::string ResourceVersionOf(const json& object) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return {};
  return metadata->value("resourceVersion", "");
}

// What placement reads from a Node; heartbeats change none of it.
bool PrestageInputsChanged(const json& before, const json& after) {
  auto old_node = core::NodeFromJson(before);
  auto new_node = core::NodeFromJson(after);
  if (!old_node || !new_node) return true;
  return old_node->metadata.labels != new_node->metadata.labels ||
         old_node->ready != new_node->ready || old_node->unschedulable != new_node->unschedulable ||
         // a resync re-announces an unchanged object: let revisions re-check too
         old_node->metadata.resource_version == new_node->metadata.resource_version;
}

// A trimmed pod's content apart from its resourceVersion: status writes that change nothing the
// gates read (conditions, IPs) wake nobody.
bool GatingInputsChanged(const json& before, const json& after) {
  json a = before;
  json b = after;
  if (a.contains("metadata")) a["metadata"].erase("resourceVersion");
  if (b.contains("metadata")) b["metadata"].erase("resourceVersion");
  return a != b || ResourceVersionOf(before) == ResourceVersionOf(after);
}

std::string StatusDigestOf(const json& revision) {
  return core::StringMember(revision, {"status", "digest"});
}

// What revocation reads from a ModelRevision: spec.revoked, status.revokedBy, the purge
// annotation. Its own status writes (node counts) change none of it.
bool RevocationInputsChanged(const json& before, const json& after) {
  const auto inputs = [](const json& revision) {
    const json* revoked_by = core::FindMember(revision, {"status", "revokedBy"});
    return std::tuple(
        core::BoolMember(revision, {"spec", "revoked"}),
        revoked_by != nullptr ? *revoked_by : json(),
        core::StringMember(revision, {"metadata", "annotations", core::api::kPurgeAnnotation}),
        StatusDigestOf(revision));
  };
  return inputs(before) != inputs(after);
}

// Whether a cache's status lists `digest` Ready, read straight from the JSON.
bool HoldsReady(const json& cache, const std::string& digest) {
  const json* revisions = core::FindMember(cache, {"status", "revisions"});
  if (revisions == nullptr || !revisions->is_array()) return false;
  return std::ranges::any_of(*revisions, [&](const json& entry) {
    return entry.is_object() && entry.value("digest", "") == digest &&
           entry.value("state", "") == core::api::kCacheStateReady;
  });
}

bool IsBound(const json& pod) {
  const auto spec = pod.find("spec");
  return spec != pod.end() && spec->is_object() && !spec->value("nodeName", "").empty();
}

// Workloads live in the namespaces the operator serves; they are trimmed to what rollouts read.
core::InformerOptions WorkloadInformer(core::ResourceType type, const ControllerOptions& options) {
  return {.type = std::move(type),
          .namespace_name = options.namespace_scope,
          .resync_period = options.resync_period,
          .transform = TrimWorkload};
}

std::string TemplateRevisionKey(const json& object) {
  const std::string ns =
      object.contains("metadata") ? object["metadata"].value("namespace", "") : std::string();
  for (const json* pod_template :
       {object.contains("spec") && object["spec"].contains("template") ? &object["spec"]["template"]
                                                                       : nullptr,
        object.contains("data") && object["data"].contains("spec") &&
                object["data"]["spec"].contains("template")
            ? &object["data"]["spec"]["template"]
            : nullptr}) {
    if (pod_template == nullptr) continue;
    const std::string name = TemplateRevision(*pod_template, ns);
    if (!name.empty()) return core::api::ObjectKey(ns, name);
  }
  return {};
}

// Whether the API server serves ModelQuotas (discovery of modelplane.io/v1alpha1). Only a
// definite answer without them says no: an API server that cannot answer now is waited for, as
// for every other informer.
bool ServesModelQuotas(core::KubeClient& client) {
  auto group = client.Request("GET", "/apis/modelplane.io/v1alpha1", nullptr, "");
  if (!group) return true;
  const json* resources = core::FindMember(*group, {"resources"});
  if (resources == nullptr || !resources->is_array()) return true;
  return std::any_of(resources->begin(), resources->end(), [](const json& resource) {
    return core::StringMember(resource, {"name"}) == core::resources::ModelQuotas().resource;
  });
}

bool Prestages(const json& revision) {
  const auto spec = revision.find("spec");
  if (spec == revision.end() || !spec->is_object()) return false;
  const auto prestage = spec->find("prestage");
  if (prestage == spec->end() || !prestage->is_object()) return false;
  const auto nodes = prestage->find("nodes");
  return nodes != prestage->end() && nodes->is_number_integer() && nodes->get<std::int64_t>() > 0;
}

}  // namespace

ControllerManager::ControllerManager(core::KubeClient& client, const core::Watcher& watcher,
                                     ControllerOptions options, ControllerMetrics& metrics,
                                     const core::Logger& logger, const core::Clock& clock)
    : client_(client),
      options_(std::move(options)),
      logger_(logger.WithComponent("operator.controllers")),
      clock_(clock),
      revisions_(client, watcher,
                 InformerFor(core::resources::ModelRevisions(), options_.namespace_scope,
                             options_.resync_period),
                 clock),
      caches_(client, watcher,
              InformerFor(core::resources::ModelCaches(), "", options_.resync_period), clock),
      nodes_(client, watcher, InformerFor(core::resources::Nodes(), "", options_.resync_period),
             clock),
      pods_(client, watcher,
            {.type = core::resources::Pods(),
             .field_selector = kNonTerminalPods,
             .resync_period = options_.resync_period,
             .transform = TrimPod},
            clock),
      revocations_(client, watcher,
                   InformerFor(core::resources::ModelRevocations(), "", options_.resync_period),
                   clock),
      quotas_(client, watcher,
              InformerFor(core::resources::ModelQuotas(), options_.namespace_scope,
                          options_.resync_period),
              clock),
      deployments_(client, watcher, WorkloadInformer(core::resources::Deployments(), options_),
                   clock),
      stateful_sets_(client, watcher, WorkloadInformer(core::resources::StatefulSets(), options_),
                     clock),
      replica_sets_(client, watcher, WorkloadInformer(core::resources::ReplicaSets(), options_),
                    clock),
      controller_revisions_(client, watcher,
                            WorkloadInformer(core::resources::ControllerRevisions(), options_),
                            clock),
      workload_inventory_({.deployments = deployments_,
                           .stateful_sets = stateful_sets_,
                           .replica_sets = replica_sets_,
                           .controller_revisions = controller_revisions_,
                           .pods = pods_}),
      events_(client,
              {.reporting_controller = "modelplane.io/operator",
               .reporting_instance = options_.reporting_instance},
              clock),
      revision_queue_(core::MakeDefaultControllerRateLimiter(clock), clock),
      cache_queue_(core::MakeDefaultControllerRateLimiter(clock), clock),
      revocation_queue_(core::MakeDefaultControllerRateLimiter(clock), clock),
      quota_queue_(core::MakeDefaultControllerRateLimiter(clock), clock),
      quota_ledger_([this](const std::string& namespace_name) {
        for (const core::ObjectPtr& quota :
             quotas_.store().ByIndex(kQuotasByNamespace, namespace_name)) {
          quota_queue_.Add(core::ObjectStore::KeyOf(*quota));
        }
      }),
      revision_controller_(Context(client, metrics, clock)),
      cache_controller_(Context(client, metrics, clock)),
      revocation_controller_(Context(client, metrics, clock)),
      quota_controller_(Context(client, metrics, clock)),
      revision_runner_(revision_queue_,
                       metrics.Instrument("modelrevision",
                                          [this](const std::string& key) {
                                            return revision_controller_.Reconcile(key);
                                          }),
                       options_.revision_workers,
                       [this](const std::string& key, const core::Error& error) {
                         logger_.Warn("reconcile_failed", {{"controller", "modelrevision"},
                                                           {"key", key},
                                                           {"error", error.ToString()}});
                       }),
      cache_runner_(
          cache_queue_,
          metrics.Instrument(
              "modelcache",
              [this](const std::string& key) { return cache_controller_.Reconcile(key); }),
          options_.cache_workers,
          [this](const std::string& key, const core::Error& error) {
            logger_.Warn("reconcile_failed",
                         {{"controller", "modelcache"}, {"key", key}, {"error", error.ToString()}});
          }),
      revocation_runner_(revocation_queue_,
                         metrics.Instrument("modelrevocation",
                                            [this](const std::string& name) {
                                              return revocation_controller_.Reconcile(name);
                                            }),
                         1,
                         [this](const std::string& name, const core::Error& error) {
                           logger_.Warn("reconcile_failed", {{"controller", "modelrevocation"},
                                                             {"key", name},
                                                             {"error", error.ToString()}});
                         }),
      quota_runner_(
          quota_queue_,
          metrics.Instrument(
              "modelquota",
              [this](const std::string& key) { return quota_controller_.Reconcile(key); }),
          1,
          [this](const std::string& key, const core::Error& error) {
            logger_.Warn("reconcile_failed",
                         {{"controller", "modelquota"}, {"key", key}, {"error", error.ToString()}});
          }),
      admission_({.client = client,
                  .caches = caches_,
                  .revisions = revisions_,
                  .parsed_caches = parsed_caches_,
                  .logger = logger,
                  .clock = clock,
                  .metrics = &metrics.admission(),
                  .rates = &source_rates_,
                  .latest_caches = &latest_caches_},
                 options_.admission) {
  revisions_.AddIndexer(kRevisionsByDigest, RevisionsByDigestIndex());
  revisions_.AddIndexer(kRevisionsByFile, RevisionsByFileIndex());
  revisions_.AddIndexer(kRevisionsByBaseDigest, RevisionsByBaseDigestIndex());
  revisions_.AddIndexer(kRevisionsByNamespace, core::indexers::ByNamespace());
  quotas_.AddIndexer(kQuotasByNamespace, core::indexers::ByNamespace());
  caches_.AddIndexer(kCachesByRevision, CachesByRevisionIndex());
  caches_.AddIndexer(kCachesByHeldDigest, CachesByHeldDigestIndex());
  pods_.AddIndexer(kPodsByNode, core::indexers::ByNodeName());
  pods_.AddIndexer(kPodsByRevision, PodsByRevisionIndex());
  pods_.AddIndexer(kGatedPodsByRevision, GatedPodsByRevisionIndex());
  pods_.AddIndexer(kGatedPodsByAdapter, GatedPodsByAdapterIndex());
  pods_.AddIndexer(kPodsByOwner, ControllerUidIndex());
  workload_inventory_.AddIndexers();
  WireHandlers();
  WireWorkloadHandlers();
}

ControllerContext ControllerManager::Context(core::KubeClient& client, ControllerMetrics& metrics,
                                             const core::Clock& clock) {
  return {.client = client,
          .revisions = revisions_,
          .caches = caches_,
          .nodes = nodes_,
          .parsed_caches = parsed_caches_,
          .latest_caches = latest_caches_,
          .parsed_nodes = parsed_nodes_,
          .pods = pods_,
          .revocations = revocations_,
          .quotas = &quotas_,
          .quota_ledger = &quota_ledger_,
          .workloads = workload_inventory_,
          .events = events_,
          .logger = logger_,
          .clock = clock,
          .metrics = metrics,
          .namespace_scope = options_.namespace_scope,
          .source_policy = options_.source_policy ? &*options_.source_policy : nullptr,
          .source_rates = &source_rates_,
          .peer_tickets = options_.peer_tickets.get()};
}

ControllerManager::~ControllerManager() {
  Stop();
}

void ControllerManager::WireHandlers() {
  revisions_.AddHandlers({
      .on_add =
          [this](const core::ObjectPtr& object) {
            revision_queue_.Add(core::ObjectStore::KeyOf(*object));
            // Pods plan in the pass of the revision they name: an adapter they wait for wakes it.
            EnqueueRevisionKeys(
                RevisionsWaitingForAdapters(pods_.store(), {core::ObjectStore::KeyOf(*object)}));
          },
      .on_update =
          [this](const core::ObjectPtr& old_object, const core::ObjectPtr& object) {
            revision_queue_.Add(core::ObjectStore::KeyOf(*object));
            EnqueueRevisionKeys(
                RevisionsWaitingForAdapters(pods_.store(), {core::ObjectStore::KeyOf(*object)}));
            // A base that got its digest: its adapters find where it is now.
            if (StatusDigestOf(*old_object) != StatusDigestOf(*object)) {
              EnqueueRevisionKeys(
                  AdapterKeysOf(revisions_.store(), {core::ObjectStore::KeyOf(*object)}));
            }
            EnqueueRevocations();
            if (RevocationInputsChanged(*old_object, *object)) {
              EnqueueHoldersOfDigests(nullptr,
                                      {StatusDigestOf(*old_object), StatusDigestOf(*object)});
            }
          },
      .on_delete =
          [this](const core::ObjectPtr& object) {
            revision_queue_.Add(core::ObjectStore::KeyOf(*object));
            EnqueueRevisionKeys(
                RevisionsWaitingForAdapters(pods_.store(), {core::ObjectStore::KeyOf(*object)}));
            EnqueueRevocations();
            EnqueueHoldersOfDigests(nullptr, {StatusDigestOf(*object)});
          },
  });
  caches_.AddHandlers({
      .on_add =
          [this](const core::ObjectPtr& object) {
            latest_caches_.Observe(*object);
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            EnqueueRevisionsOfCache(*object);
            // A new cache is a new placement candidate.
            EnqueuePrestagingRevisions();
            EnqueueRevisionsWithGatedPods();
          },
      .on_update =
          [this](const core::ObjectPtr& old_object, const core::ObjectPtr& object) {
            latest_caches_.Observe(*object);
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            if (ResourceVersionOf(*old_object) == ResourceVersionOf(*object)) {
              EnqueueRevisionsOfCache(*object);  // a resync: look at everything again
              return;
            }
            const std::vector<std::string> moved = ChangedSpecRevisionKeys(*old_object, *object);
            EnqueueRevisionKeys(moved);
            EnqueueRevisionKeys(AdapterKeysOf(revisions_.store(), moved));
            const std::vector<std::string> changed = ChangedStatusDigests(*old_object, *object);
            EnqueueRevisionsWithDigests(changed);
            EnqueueHoldersOfDigests(object.get(), changed);
          },
      .on_delete =
          [this](const core::ObjectPtr& object) {
            latest_caches_.Forget(core::ObjectStore::KeyOf(*object));
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            EnqueueRevisionsOfCache(*object);
          },
  });
  nodes_.AddHandlers({
      .on_add =
          [this](const core::ObjectPtr& object) {
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            EnqueuePrestagingRevisions();
            EnqueueRevisionsWithGatedPods();
          },
      .on_update =
          [this](const core::ObjectPtr& old_object, const core::ObjectPtr& object) {
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            if (PrestageInputsChanged(*old_object, *object)) {
              EnqueuePrestagingRevisions();
              EnqueueRevisionsWithGatedPods();
            }
          },
      .on_delete =
          [this](const core::ObjectPtr& object) {
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            EnqueuePrestagingRevisions();
            EnqueueRevisionsWithGatedPods();
          },
  });
  // A quota applies to every revision of its namespace.
  const auto quota_changed = [this](const core::ObjectPtr& quota) {
    EnqueueNamespaceQuotas(core::StringMember(*quota, {"metadata", "namespace"}));
  };
  quotas_.AddHandlers({
      .on_add = quota_changed,
      .on_update = [quota_changed](const core::ObjectPtr&,
                                   const core::ObjectPtr& object) { quota_changed(object); },
      .on_delete = quota_changed,
  });
  // A revocation covers revisions by their digest or by a file's: rare enough to look at every
  // revision again, and a file digest has no index.
  const auto enqueue_all_revisions = [this](const core::ObjectPtr& revocation) {
    revocation_queue_.Add(core::ObjectStore::KeyOf(*revocation));
    for (const core::ObjectPtr& revision : revisions_.store().List()) {
      revision_queue_.Add(core::ObjectStore::KeyOf(*revision));
    }
  };
  revocations_.AddHandlers({
      .on_add = enqueue_all_revisions,
      .on_update = [enqueue_all_revisions](
                       const core::ObjectPtr&,
                       const core::ObjectPtr& object) { enqueue_all_revisions(object); },
      .on_delete = enqueue_all_revisions,
  });
  const auto enqueue_revision_of = [this](const json& pod) {
    if (auto key = RevisionKeyOfPod(pod)) EnqueueRevisionKeys({*key});
    // The revisions its workload rolls between plan with where its pods run.
    EnqueueRevisionKeys(workload_inventory_.RevisionKeysOfPodOwner(pod));
  };
  pods_.AddHandlers({
      .on_add = [enqueue_revision_of](const core::ObjectPtr& pod) { enqueue_revision_of(*pod); },
      .on_update =
          [enqueue_revision_of](const core::ObjectPtr& old_pod, const core::ObjectPtr& pod) {
            if (!GatingInputsChanged(*old_pod, *pod)) return;
            enqueue_revision_of(*old_pod);
            enqueue_revision_of(*pod);
          },
      .on_delete =
          [this, enqueue_revision_of](const core::ObjectPtr& pod) {
            enqueue_revision_of(*pod);
            if (IsBound(*pod)) EnqueueRevisionsWithGatedPods();
          },
  });
}

void ControllerManager::WireWorkloadHandlers() {
  for (auto [informer, kind] :
       {std::pair{&deployments_, kKindDeployment}, std::pair{&stateful_sets_, kKindStatefulSet}}) {
    const auto enqueue = [this, kind](const json& object) {
      EnqueueRevisionKeys(workload_inventory_.RevisionKeysOf(object, kind));
    };
    informer->AddHandlers({
        .on_add = [enqueue](const core::ObjectPtr& object) { enqueue(*object); },
        .on_update =
            [enqueue](const core::ObjectPtr& old_object, const core::ObjectPtr& object) {
              enqueue(*old_object);
              enqueue(*object);
            },
        .on_delete = [enqueue](const core::ObjectPtr& object) { enqueue(*object); },
    });
  }
  // History objects name a revision their workload may return to.
  for (core::Informer* informer : {&replica_sets_, &controller_revisions_}) {
    const auto enqueue = [this](const json& object) {
      if (const std::string key = TemplateRevisionKey(object); !key.empty()) {
        EnqueueRevisionKeys({key});
      }
    };
    informer->AddHandlers({
        .on_add = [enqueue](const core::ObjectPtr& object) { enqueue(*object); },
        .on_update = [enqueue](const core::ObjectPtr&,
                               const core::ObjectPtr& object) { enqueue(*object); },
        .on_delete = [enqueue](const core::ObjectPtr& object) { enqueue(*object); },
    });
  }
}

void ControllerManager::EnqueueRevisionsOfCache(const json& cache) {
  const std::vector<std::string> listed = SpecRevisionKeys(cache);
  EnqueueRevisionKeys(listed);
  // An adapter follows its base's entries (adapter_placement.h).
  EnqueueRevisionKeys(AdapterKeysOf(revisions_.store(), listed));
  EnqueueRevisionsWithDigests(StatusDigests(cache));
}

void ControllerManager::EnqueueRevisionKeys(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    // Keys outside the namespace scope are not ours to reconcile (and not in the informer).
    if (options_.namespace_scope.empty() || key.starts_with(options_.namespace_scope + "/")) {
      revision_queue_.Add(key);
    }
  }
}

void ControllerManager::EnqueueRevisionsWithDigests(const std::vector<std::string>& digests) {
  std::vector<std::string> keys;
  for (const std::string& digest : digests) {
    for (const core::ObjectPtr& revision : revisions_.store().ByIndex(kRevisionsByDigest, digest)) {
      keys.push_back(core::ObjectStore::KeyOf(*revision));
      revision_queue_.Add(keys.back());
    }
  }
  // An adapter Ready on a node (or gone from it) lets go, or holds, the pods that wait for it.
  EnqueueRevisionKeys(RevisionsWaitingForAdapters(pods_.store(), keys));
}

void ControllerManager::EnqueuePrestagingRevisions() {
  for (const core::ObjectPtr& revision : revisions_.store().List()) {
    if (Prestages(*revision)) revision_queue_.Add(core::ObjectStore::KeyOf(*revision));
  }
}

void ControllerManager::EnqueueRevocations() {
  for (const core::ObjectPtr& revocation : revocations_.store().List()) {
    revocation_queue_.Add(core::ObjectStore::KeyOf(*revocation));
  }
}

void ControllerManager::EnqueueHoldersOfDigests(const json* cache,
                                                const std::vector<std::string>& digests) {
  std::string changed_zone;
  if (cache != nullptr) changed_zone = core::StringMember(*cache, {"status", "zone"});
  for (const std::string& digest : digests) {
    if (digest.empty()) continue;
    const std::vector<core::ObjectPtr> holders =
        caches_.store().ByIndex(kCachesByHeldDigest, digest);
    std::size_t ready_in_changed_zone = 0;
    if (cache != nullptr) {
      for (const core::ObjectPtr& holder : holders) {
        if (core::StringMember(*holder, {"status", "zone"}) == changed_zone &&
            HoldsReady(*holder, digest)) {
          ++ready_in_changed_zone;
        }
      }
    }
    for (const core::ObjectPtr& holder : holders) {
      if (cache == nullptr || HoldingMayChange(core::StringMember(*holder, {"status", "zone"}),
                                               changed_zone, ready_in_changed_zone)) {
        cache_queue_.Add(core::ObjectStore::KeyOf(*holder));
      }
    }
  }
}

void ControllerManager::EnqueueNamespaceQuotas(const std::string& namespace_name) {
  for (const core::ObjectPtr& revision :
       revisions_.store().ByIndex(kRevisionsByNamespace, namespace_name)) {
    revision_queue_.Add(core::ObjectStore::KeyOf(*revision));
  }
  for (const core::ObjectPtr& quota : quotas_.store().ByIndex(kQuotasByNamespace, namespace_name)) {
    quota_queue_.Add(core::ObjectStore::KeyOf(*quota));
  }
}

void ControllerManager::EnqueueRevisionsWithGatedPods() {
  EnqueueRevisionKeys(pods_.store().IndexValues(kGatedPodsByRevision));
}

bool ControllerManager::Start(core::CancellationToken& stop) {
  revisions_.Start();
  caches_.Start();
  nodes_.Start();
  pods_.Start();
  revocations_.Start();
  quotas_served_ = ServesModelQuotas(client_);
  if (quotas_served_) {
    quotas_.Start();
  } else {
    logger_.Warn("model_quotas_not_served",
                 {{"effect",
                   "no ModelQuota can exist, so none is enforced; after kubectl apply -f "
                   "crds/, restart the operator"}});
  }
  for (core::Informer* informer :
       {&deployments_, &stateful_sets_, &replica_sets_, &controller_revisions_}) {
    informer->Start();
  }
  if (!core::WaitForCacheSync({&revisions_, &caches_, &nodes_, &pods_, &revocations_, &deployments_,
                               &stateful_sets_, &replica_sets_, &controller_revisions_},
                              stop, clock_)) {
    return false;
  }
  if (quotas_served_ && !core::WaitForCacheSync({&quotas_}, stop, clock_)) return false;
  logger_.Info("informers_synced", {{"revisions", revisions_.store().Size()},
                                    {"caches", caches_.store().Size()},
                                    {"nodes", nodes_.store().Size()},
                                    {"pods", pods_.store().Size()},
                                    {"deployments", deployments_.store().Size()},
                                    {"statefulsets", stateful_sets_.store().Size()}});
  revision_runner_.Start();
  cache_runner_.Start();
  revocation_runner_.Start();
  quota_runner_.Start();
  if (options_.admission.enabled) admission_.Start();
  started_ = true;
  return true;
}

void ControllerManager::Stop() {
  if (started_) {
    admission_.Stop();
    revision_runner_.Stop();
    cache_runner_.Stop();
    revocation_runner_.Stop();
    quota_runner_.Stop();
    started_ = false;
  }
  for (core::Informer* informer :
       {&deployments_, &stateful_sets_, &replica_sets_, &controller_revisions_}) {
    informer->Stop();
  }
  pods_.Stop();
  revocations_.Stop();
  quotas_.Stop();
  revisions_.Stop();
  caches_.Stop();
  nodes_.Stop();
}

const core::ControllerStats& ControllerManager::revision_stats() const {
  return revision_runner_.stats();
}
const core::ControllerStats& ControllerManager::cache_stats() const {
  return cache_runner_.stats();
}

}  // namespace modelplane::controller
