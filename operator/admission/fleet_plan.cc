#include "operator/admission/fleet_plan.h"

#include <algorithm>

#include "core/api/object_key.h"

namespace modelplane::controller {
namespace {

namespace api = core::api;

// One node's wish for one revision.
struct Wish {
  std::string node;
  std::string zone;
  std::string revision;  // "namespace/name"
  const RevisionSources* sources = nullptr;
  StagingPriority priority = StagingPriority::kPrestage;
  std::int64_t bytes_done = 0;
  bool serves_peers = false;
};

const api::CachedRevision* StatusEntry(const api::ModelCache& cache, const std::string& digest) {
  if (!cache.status) return nullptr;
  for (const api::CachedRevision& entry : cache.status->revisions) {
    if (entry.digest == digest) return &entry;
  }
  return nullptr;
}

// Refused before it started: no bytes will be read for it until its spec or the node changes.
bool Refused(const api::CachedRevision& entry) {
  return entry.state == api::kCacheStateFailed &&
         (entry.reason == api::kCacheReasonInsufficientCapacity ||
          entry.reason == api::kCacheReasonSourcePolicyDenied);
}

std::string GroupKey(const std::string& zone, const std::string& digest) {
  return zone + "|" + digest;
}

}  // namespace

std::string StagingKey(std::string_view node, std::string_view digest) {
  std::string key(node);
  key.append("|").append(digest);
  return key;
}

StagingPriority PriorityOfReason(std::string_view reason) {
  if (reason == api::kReasonInUse || reason == api::kReasonRollout) {
    return StagingPriority::kRolloutStep;
  }
  if (reason == api::kReasonRollback) return StagingPriority::kRollbackRefill;
  if (reason == api::kReasonPrestage) return StagingPriority::kPrestage;
  return StagingPriority::kSpeculative;
}

FleetPlan PlanFleet(const FleetPlanInput& input) {
  FleetPlan plan;
  std::set<std::string> zones_holding;  // "zone|digest" with a Ready copy
  std::map<std::string, std::vector<Wish>> groups;
  for (const auto& snapshot : input.caches) {
    const api::ModelCache& cache = *snapshot;
    // No status yet: the node's agent never reported (not started, crashed at start, cut off
    // from the API server). It could not use a grant, and its zone is unknown, so it would seed
    // a zone of its own and hold origin streams the others wait for (a CI run lost 15 minutes
    // so). Its agent's first status report brings it in; until then it is not in the plan.
    if (!cache.status) continue;
    const std::string& zone = cache.status->zone;
    for (const api::CachedRevision& entry : cache.status->revisions) {
      if (entry.state == api::kCacheStateReady) zones_holding.insert(GroupKey(zone, entry.digest));
    }
    std::set<std::string> seen;
    for (const api::DesiredRevision& desired : cache.spec.revisions) {
      const std::string key =
          api::ObjectKey(desired.revision.namespace_name, desired.revision.name);
      if (!seen.insert(key).second) continue;
      const auto revision = input.revisions.find(key);
      if (revision == input.revisions.end() || revision->second.identities.empty()) continue;
      const std::string& digest = revision->second.digest;
      const api::CachedRevision* entry = StatusEntry(cache, digest);
      if (entry != nullptr && (entry->state == api::kCacheStateReady || Refused(*entry))) continue;
      groups[GroupKey(zone, digest)].push_back(
          {.node = cache.metadata.name,
           .zone = zone,
           .revision = key,
           .sources = &revision->second,
           .priority = PriorityOfReason(desired.reason),
           .bytes_done = entry != nullptr ? entry->bytes_done : 0,
           .serves_peers = !cache.status->peer_endpoint.empty()});
    }
  }

  for (auto& [group, wishes] : groups) {
    std::sort(wishes.begin(), wishes.end(),
              [](const Wish& a, const Wish& b) { return a.node < b.node; });
    // A node that stages several revisions of one digest counts once per revision: each is a
    // staging the agent runs (the same bytes, so the second is a local hit).
    std::string seeder;
    if (!zones_holding.contains(group)) {
      const std::string& digest = wishes.front().sources->digest;
      const auto stalled = [&](const Wish& wish) {
        return input.stalled.contains(StagingKey(wish.node, digest));
      };
      std::string replaced;  // a seeder that stalled: it does not take its own place back
      if (auto before = input.seeders.find(group); before != input.seeders.end()) {
        const bool still = std::any_of(wishes.begin(), wishes.end(), [&](const Wish& wish) {
          return wish.node == before->second && wish.serves_peers && !stalled(wish);
        });
        if (still)
          seeder = before->second;
        else
          replaced = before->second;
      }
      if (seeder.empty()) {
        // The follower that holds the most takes over (it has the least left to read); a
        // stalled one only when no other can. (Followers waiting on a dead seeder look stalled
        // too: they wait.)
        const Wish* best = nullptr;
        for (const Wish& wish : wishes) {
          if (!wish.serves_peers && wishes.size() > 1) continue;
          if (wish.node == replaced && wishes.size() > 1) continue;
          const auto better = [&](const Wish& a, const Wish& b) {
            if (stalled(a) != stalled(b)) return !stalled(a);
            return a.bytes_done > b.bytes_done;
          };
          if (best == nullptr || better(wish, *best)) best = &wish;
        }
        if (best == nullptr) best = &wishes.front();
        seeder = best->node;
      }
      plan.seeders[group] = seeder;
    }
    for (const Wish& wish : wishes) {
      for (const std::string& identity : wish.sources->identities) {
        plan.node_sources[wish.node].insert(identity);
        if (wish.node == seeder) {
          plan.demands[identity].push_back({.node = wish.node,
                                            .revision = wish.revision,
                                            .priority = wish.priority,
                                            .wanted_streams = input.wanted_streams});
        } else {
          ++plan.followers[identity];
        }
      }
    }
  }
  return plan;
}

SourceObservation ObserveSource(const CacheSnapshots& caches, const std::string& identity,
                                const api::Timestamp& newer_than) {
  SourceObservation observation;
  double ttfb_weighted = 0;
  std::int64_t ttfb_requests = 0;
  for (const auto& cache : caches) {
    if (!cache->status) continue;
    for (const api::SourceTelemetry& source : cache->status->sources) {
      if (source.source != identity || source.window_end < newer_than) continue;
      observation.bytes_per_second += static_cast<double>(source.bytes_per_second);
      observation.streams_in_use += source.peak_streams;
      observation.requests_ok += source.requests_ok;
      observation.throttled += source.requests_throttled;
      observation.errors += source.requests_failed;
      observation.timeouts += source.requests_timed_out;
      if (source.ttfb_milliseconds > 0 && source.requests_ok > 0) {
        ttfb_weighted +=
            static_cast<double>(source.ttfb_milliseconds) * static_cast<double>(source.requests_ok);
        ttfb_requests += source.requests_ok;
      }
    }
  }
  if (ttfb_requests > 0) {
    observation.ttfb_seconds = ttfb_weighted / static_cast<double>(ttfb_requests) / 1000.0;
  }
  return observation;
}

}  // namespace modelplane::controller
