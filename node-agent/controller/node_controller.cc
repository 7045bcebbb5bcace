#include "node-agent/controller/node_controller.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/timestamp.h"
#include "core/kube/api_status.h"
#include "core/kube/builtin_types.h"
#include "core/kube/resource_type.h"
#include "core/workqueue/rate_limiter.h"
#include "node-agent/controller/pod_readiness.h"

namespace modelplane::agent {
namespace {

using nlohmann::json;

constexpr char kKey[] = "node";
constexpr auto kSyncPoll = std::chrono::milliseconds(200);

std::optional<core::api::Timestamp> ToTimestamp(const std::optional<WallTime>& time) {
  if (!time) return std::nullopt;
  return std::chrono::time_point_cast<std::chrono::microseconds>(*time);
}

core::api::StageTimestamps ToStageTimestamps(const StageTimes& times) {
  return {.queued = ToTimestamp(times.queued),
          .first_byte = ToTimestamp(times.first_byte),
          .last_byte = ToTimestamp(times.last_byte),
          .verified = ToTimestamp(times.verified),
          .published = ToTimestamp(times.published)};
}

// The status with byte counts zeroed: when only these move, writes are rate limited.
json ShapeOf(json status) {
  if (auto revisions = status.find("revisions");
      revisions != status.end() && revisions->is_array()) {
    for (json& entry : *revisions) entry.erase("bytesDone");
  }
  status.erase("usedBytes");
  status.erase("reservedBytes");
  return status;
}

struct Wanted {
  core::api::RevisionReference reference;
  std::string digest_hint;  // from the ModelCache spec; the revision's own digest wins
  std::string reason;
};

}  // namespace

NodeController::NodeController(Dependencies dependencies, NodeControllerOptions options)
    : dependencies_(dependencies),
      options_(std::move(options)),
      logger_(dependencies.logger.WithComponent("node-agent.controller")),
      caches_(dependencies.client, dependencies.watcher,
              {.type = core::resources::ModelCaches(), .resync_period = options_.resync_period},
              dependencies.clock),
      revisions_(
          dependencies.client, dependencies.watcher,
          {.type = core::resources::ModelRevisions(), .resync_period = options_.resync_period},
          dependencies.clock),
      pods_(dependencies.client, dependencies.watcher,
            {.type = core::resources::Pods(),
             .field_selector = "spec.nodeName=" + options_.node_name,
             .resync_period = options_.resync_period},
            dependencies.clock),
      queue_(core::MakeDefaultControllerRateLimiter(dependencies.clock), dependencies.clock),
      runner_(
          queue_, [this](const std::string&) { return Reconcile(); }, 1,
          [this](const std::string&, const core::Error& error) {
            logger_.Warn("reconcile_failed", {{"error", error.ToString()}});
          }) {
  const core::InformerHandlers poke{
      .on_add = [this](const core::ObjectPtr&) { Poke(); },
      .on_update = [this](const core::ObjectPtr&, const core::ObjectPtr&) { Poke(); },
      .on_delete = [this](const core::ObjectPtr&) { Poke(); }};
  caches_.AddHandlers(poke);
  revisions_.AddHandlers(poke);
  pods_.AddHandlers(poke);
}

NodeController::~NodeController() {
  Stop();
}

void NodeController::Poke() {
  queue_.Add(kKey);
}

bool NodeController::Start(core::CancellationToken& stop) {
  caches_.Start();
  revisions_.Start();
  pods_.Start();
  while (!(caches_.HasSynced() && revisions_.HasSynced() && pods_.HasSynced())) {
    if (!stop.SleepFor(kSyncPoll)) return false;
  }
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
  revisions_.Stop();
  caches_.Stop();
}

core::Status NodeController::EnsureCacheExists() {
  if (caches_.store().Get(options_.node_name)) return core::Ok();
  // The operator creates ModelCaches as nodes appear; an agent that starts first makes its own
  // rather than wait, and the operator adopts it.
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

std::vector<std::string> NodeController::PeersHolding(const core::Sha256Bytes& digest) const {
  const std::string wanted = core::FormatDigest(digest);
  std::vector<std::string> endpoints;
  for (const core::ObjectPtr& object : caches_.store().List()) {
    auto cache = core::api::ModelCacheFromJson(*object);
    if (!cache || cache->metadata.name == options_.node_name || !cache->status) continue;
    if (cache->status->peer_endpoint.empty()) continue;
    for (const core::api::CachedRevision& revision : cache->status->revisions) {
      if (revision.digest == wanted && revision.state == core::api::kCacheStateReady) {
        endpoints.push_back(cache->status->peer_endpoint);
        break;
      }
    }
  }
  std::sort(endpoints.begin(), endpoints.end());
  return endpoints;
}

core::Status NodeController::ApplyStatus(const json& status) {
  const json body = {{"apiVersion", core::api::kApiVersion},
                     {"kind", core::api::kModelCacheKind},
                     {"metadata", {{"name", options_.node_name}}},
                     {"status", status}};
  auto applied = dependencies_.client.Patch(
      core::resources::ModelCaches(), "", options_.node_name, core::PatchType::kApply, body,
      {.field_manager = options_.field_manager, .force = true, .subresource = "status"});
  if (!applied) return std::unexpected(applied.error());
  return core::Ok();
}

core::Result<core::ReconcileResult> NodeController::Reconcile() {
  const auto now = dependencies_.clock.Now();
  const core::ObjectPtr cache_object = caches_.store().Get(options_.node_name);
  if (!cache_object) {
    if (auto created = EnsureCacheExists(); !created) return std::unexpected(created.error());
    return core::ReconcileResult::RequeueAfter(std::chrono::seconds(1));
  }
  auto cache = core::api::ModelCacheFromJson(*cache_object);
  if (!cache)
    return std::unexpected(cache.error().Wrap("reading ModelCache " + options_.node_name));

  // What this node should hold: the operator's list, then revisions that gated pods here need.
  std::vector<Wanted> wanted;
  std::set<std::string> wanted_keys;
  for (const core::api::DesiredRevision& desired : cache->spec.revisions) {
    const std::string key = desired.revision.namespace_name + "/" + desired.revision.name;
    if (wanted_keys.insert(key).second) {
      wanted.push_back({desired.revision, desired.digest, desired.reason});
    }
  }
  std::vector<core::Pod> gated_pods;
  for (const core::ObjectPtr& object : pods_.store().List()) {
    auto pod = core::PodFromJson(*object);
    if (!pod || pod->metadata.deletion_timestamp) continue;
    auto reference = GatedRevision(*pod);
    if (!reference) continue;
    const std::string key = reference->namespace_name + "/" + reference->name;
    if (wanted_keys.insert(key).second) {
      wanted.push_back({*reference, "", std::string(core::api::kReasonInUse)});
    }
    gated_pods.push_back(std::move(*pod));
  }

  // Earlier status entries carry tier and timestamps across agent restarts.
  std::map<std::string, core::api::CachedRevision> previous;
  if (cache->status) {
    for (const auto& entry : cache->status->revisions) previous.emplace(entry.digest, entry);
  }

  core::api::ModelCacheStatus status;
  status.observed_generation = cache->metadata.generation;
  status.peer_endpoint = options_.peer_endpoint;
  std::map<std::string, core::api::CachedRevision> entries;  // by digest
  std::map<std::string, std::string> digest_of_reference;    // "ns/name" -> digest when Ready
  std::set<core::Sha256Bytes> now_wanted;
  bool moving = false;
  std::optional<core::Clock::SteadyTime> next_retry;

  for (const Wanted& item : wanted) {
    const std::string key = item.reference.namespace_name + "/" + item.reference.name;
    core::api::CachedRevision entry{.digest = item.digest_hint,
                                    .state = std::string(core::api::kCacheStatePending)};
    const core::ObjectPtr revision_object = revisions_.store().Get(key);
    if (!revision_object) {
      entry.state = core::api::kCacheStateFailed;
      entry.message = fmt::format("ModelRevision {} not found", key);
      if (!entry.digest.empty()) entries[entry.digest] = entry;
      continue;
    }
    auto parsed = core::api::ModelRevisionFromJson(*revision_object);
    auto loaded = parsed ? CheckRevision(std::move(*parsed))
                         : core::Result<LoadedRevision>(std::unexpected(parsed.error()));
    if (!loaded) {
      entry.state = core::api::kCacheStateFailed;
      entry.message = fmt::format("ModelRevision {} is invalid: {}", key, loaded.error().message());
      if (!entry.digest.empty()) entries[entry.digest] = entry;
      continue;
    }
    if (loaded->revision.spec.revoked) continue;  // never staged; purging comes with revocation
    entry.digest = core::FormatDigest(loaded->digest);
    for (const auto& file : loaded->revision.spec.files) {
      entry.bytes_total += file.size;
    }
    // Wanted either way: a staging that just published keeps its stager entry (tier, times).
    now_wanted.insert(loaded->digest);
    if (auto manifest = dependencies_.store.FindRevision(loaded->digest)) {
      entry.state = core::api::kCacheStateReady;
      entry.bytes_done = entry.bytes_total;
      auto staged = stager_ != nullptr ? stager_->State(loaded->digest) : std::nullopt;
      if (staged && staged->phase == StagingPhase::kReady) {
        entry.source_tier = staged->tier;
        entry.timestamps = ToStageTimestamps(staged->times);
      } else if (auto before = previous.find(entry.digest);
                 before != previous.end() && before->second.state == core::api::kCacheStateReady) {
        entry.source_tier = before->second.source_tier;
        entry.timestamps = before->second.timestamps;
      } else {
        entry.source_tier = core::api::kTierLocal;
        entry.timestamps.published =
            core::api::Timestamp(std::chrono::seconds(manifest->published_unix_seconds));
      }
      digest_of_reference[key] = entry.digest;
    } else if (stager_ != nullptr) {
      stager_->Want(*loaded);
      if (auto staged = stager_->State(loaded->digest)) {
        entry.state = std::string(StagingPhaseName(staged->phase));
        entry.bytes_done = staged->bytes_done;
        entry.source_tier = staged->tier;
        entry.timestamps = ToStageTimestamps(staged->times);
        entry.message = staged->message;
        if (staged->phase == StagingPhase::kQueued || staged->phase == StagingPhase::kStaging) {
          moving = true;
        }
        if (staged->phase == StagingPhase::kReady) moving = true;  // the store will say Ready
        if (auto retry = stager_->RetryAt(loaded->digest)) {
          next_retry = next_retry ? std::min(*next_retry, *retry) : *retry;
        }
      }
    }
    entries[entry.digest] = entry;
  }
  // Revisions no longer wanted stop staging (their bytes stay until garbage collection).
  if (stager_ != nullptr) {
    for (const core::Sha256Bytes& digest : staging_wanted_) {
      if (!now_wanted.contains(digest)) stager_->Forget(digest);
    }
  }
  staging_wanted_ = std::move(now_wanted);
  // Everything else the store holds is inventory the scheduler can use.
  for (const RevisionManifest& manifest : dependencies_.store.ListRevisions()) {
    const std::string digest = core::FormatDigest(manifest.revision_digest);
    if (entries.contains(digest)) continue;
    core::api::CachedRevision entry{.digest = digest,
                                    .state = std::string(core::api::kCacheStateReady),
                                    .bytes_done = static_cast<std::int64_t>(manifest.TotalBytes()),
                                    .bytes_total = static_cast<std::int64_t>(manifest.TotalBytes()),
                                    .source_tier = std::string(core::api::kTierLocal)};
    if (auto before = previous.find(digest); before != previous.end()) {
      entry.source_tier = before->second.source_tier;
      entry.timestamps = before->second.timestamps;
    }
    entries[digest] = entry;
  }
  for (auto& [digest, entry] : entries) status.revisions.push_back(std::move(entry));
  const SpaceUsage usage = dependencies_.store.Usage();
  status.capacity_bytes = static_cast<std::int64_t>(usage.capacity_bytes);
  status.used_bytes = static_cast<std::int64_t>(usage.used_bytes);
  status.reserved_bytes = static_cast<std::int64_t>(usage.reserved_bytes);

  // Gated pods whose revision is verified here may go Ready.
  for (const core::Pod& pod : gated_pods) {
    if (WeightsReadyIsTrue(pod)) continue;
    const auto reference = GatedRevision(pod);
    const auto ready = digest_of_reference.find(reference->namespace_name + "/" + reference->name);
    if (ready == digest_of_reference.end()) continue;
    std::string tier;
    for (const auto& entry : status.revisions) {
      if (entry.digest == ready->second) tier = entry.source_tier;
    }
    const std::string stamp = core::api::FormatTimestamp(
        std::chrono::time_point_cast<std::chrono::microseconds>(dependencies_.clock.WallNow()));
    auto patched = dependencies_.client.Patch(core::resources::Pods(), pod.metadata.namespace_name,
                                              pod.metadata.name, core::PatchType::kStrategicMerge,
                                              WeightsReadyPatch(ready->second, tier, stamp),
                                              {.subresource = "status"});
    if (!patched && patched.error().code() != core::ErrorCode::kNotFound) {
      return std::unexpected(
          patched.error().Wrap("setting weights-ready on pod " + pod.metadata.name));
    }
    if (patched) {
      logger_.Info("pod_weights_ready",
                   {{"pod", pod.metadata.namespace_name + "/" + pod.metadata.name},
                    {"digest", ready->second},
                    {"tier", tier}});
    }
  }

  const json status_json = core::api::ToJson(status);
  const json shape = ShapeOf(status_json);
  if (status_json != last_status_) {
    const auto since = now - last_status_write_;
    if (shape == last_status_shape_ && since < options_.status_interval) {
      return core::ReconcileResult::RequeueAfter(options_.status_interval - since);
    }
    if (auto applied = ApplyStatus(status_json); !applied) {
      return std::unexpected(applied.error().Wrap("applying ModelCache status"));
    }
    last_status_ = status_json;
    last_status_shape_ = shape;
    last_status_write_ = now;
  }
  if (moving) return core::ReconcileResult::RequeueAfter(options_.status_interval);
  if (next_retry) {
    return core::ReconcileResult::RequeueAfter(
        std::max<core::Clock::SteadyTime::duration>(*next_retry - now, std::chrono::seconds(1)));
  }
  return core::ReconcileResult::Done();
}

}  // namespace modelplane::agent
