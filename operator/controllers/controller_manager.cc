#include "operator/controllers/controller_manager.h"

#include "core/kube/builtin_types.h"
#include "core/workqueue/rate_limiter.h"
#include "operator/controllers/cache_entries.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

constexpr auto kSyncPoll = std::chrono::milliseconds(200);

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
bool PlacementInputsChanged(const json& before, const json& after) {
  auto old_node = core::NodeFromJson(before);
  auto new_node = core::NodeFromJson(after);
  if (!old_node || !new_node) return true;
  return old_node->metadata.labels != new_node->metadata.labels ||
         old_node->ready != new_node->ready || old_node->unschedulable != new_node->unschedulable ||
         // a resync re-announces an unchanged object: let revisions re-check too
         old_node->metadata.resource_version == new_node->metadata.resource_version;
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
    : options_(std::move(options)),
      logger_(logger.WithComponent("operator.controllers")),
      revisions_(client, watcher,
                 InformerFor(core::resources::ModelRevisions(), options_.namespace_scope,
                             options_.resync_period),
                 clock),
      caches_(client, watcher,
              InformerFor(core::resources::ModelCaches(), "", options_.resync_period), clock),
      nodes_(client, watcher, InformerFor(core::resources::Nodes(), "", options_.resync_period),
             clock),
      events_(client,
              {.reporting_controller = "modelplane.io/operator",
               .reporting_instance = options_.reporting_instance},
              clock),
      revision_queue_(core::MakeDefaultControllerRateLimiter(clock), clock),
      cache_queue_(core::MakeDefaultControllerRateLimiter(clock), clock),
      revision_controller_({.client = client,
                            .revisions = revisions_,
                            .caches = caches_,
                            .nodes = nodes_,
                            .events = events_,
                            .logger = logger_,
                            .clock = clock,
                            .metrics = metrics,
                            .namespace_scope = options_.namespace_scope}),
      cache_controller_({.client = client,
                         .revisions = revisions_,
                         .caches = caches_,
                         .nodes = nodes_,
                         .events = events_,
                         .logger = logger_,
                         .clock = clock,
                         .metrics = metrics,
                         .namespace_scope = options_.namespace_scope}),
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
          options_.cache_workers, [this](const std::string& key, const core::Error& error) {
            logger_.Warn("reconcile_failed",
                         {{"controller", "modelcache"}, {"key", key}, {"error", error.ToString()}});
          }) {
  revisions_.AddIndexer(kRevisionsByDigest, RevisionsByDigestIndex());
  caches_.AddIndexer(kCachesByRevision, CachesByRevisionIndex());
  WireHandlers();
}

ControllerManager::~ControllerManager() {
  Stop();
}

void ControllerManager::WireHandlers() {
  revisions_.AddHandlers({
      .on_add =
          [this](const core::ObjectPtr& object) {
            revision_queue_.Add(core::ObjectStore::KeyOf(*object));
          },
      .on_update =
          [this](const core::ObjectPtr&, const core::ObjectPtr& object) {
            revision_queue_.Add(core::ObjectStore::KeyOf(*object));
          },
      .on_delete =
          [this](const core::ObjectPtr& object) {
            revision_queue_.Add(core::ObjectStore::KeyOf(*object));
          },
  });
  caches_.AddHandlers({
      .on_add =
          [this](const core::ObjectPtr& object) {
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            EnqueueRevisionsOfCache(*object);
            // A new cache is a new placement candidate.
            EnqueuePrestagingRevisions();
          },
      .on_update =
          [this](const core::ObjectPtr& old_object, const core::ObjectPtr& object) {
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            if (ResourceVersionOf(*old_object) == ResourceVersionOf(*object)) {
              EnqueueRevisionsOfCache(*object);  // a resync: look at everything again
              return;
            }
            EnqueueRevisionKeys(ChangedSpecRevisionKeys(*old_object, *object));
            EnqueueRevisionsWithDigests(ChangedStatusDigests(*old_object, *object));
          },
      .on_delete =
          [this](const core::ObjectPtr& object) {
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            EnqueueRevisionsOfCache(*object);
          },
  });
  nodes_.AddHandlers({
      .on_add =
          [this](const core::ObjectPtr& object) {
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            EnqueuePrestagingRevisions();
          },
      .on_update =
          [this](const core::ObjectPtr& old_object, const core::ObjectPtr& object) {
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            if (PlacementInputsChanged(*old_object, *object)) EnqueuePrestagingRevisions();
          },
      .on_delete =
          [this](const core::ObjectPtr& object) {
            cache_queue_.Add(core::ObjectStore::KeyOf(*object));
            EnqueuePrestagingRevisions();
          },
  });
}

void ControllerManager::EnqueueRevisionsOfCache(const json& cache) {
  EnqueueRevisionKeys(SpecRevisionKeys(cache));
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
  for (const std::string& digest : digests) {
    for (const core::ObjectPtr& revision : revisions_.store().ByIndex(kRevisionsByDigest, digest)) {
      revision_queue_.Add(core::ObjectStore::KeyOf(*revision));
    }
  }
}

void ControllerManager::EnqueuePrestagingRevisions() {
  for (const core::ObjectPtr& revision : revisions_.store().List()) {
    if (Prestages(*revision)) revision_queue_.Add(core::ObjectStore::KeyOf(*revision));
  }
}

bool ControllerManager::Start(core::CancellationToken& stop) {
  revisions_.Start();
  caches_.Start();
  nodes_.Start();
  while (!(revisions_.HasSynced() && caches_.HasSynced() && nodes_.HasSynced())) {
    if (!stop.SleepFor(kSyncPoll)) return false;
  }
  logger_.Info("informers_synced", {{"revisions", revisions_.store().Size()},
                                    {"caches", caches_.store().Size()},
                                    {"nodes", nodes_.store().Size()}});
  revision_runner_.Start();
  cache_runner_.Start();
  started_ = true;
  return true;
}

void ControllerManager::Stop() {
  if (started_) {
    revision_runner_.Stop();
    cache_runner_.Stop();
    started_ = false;
  }
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
