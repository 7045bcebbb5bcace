#include "operator/gating/gate_planner.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace modelplane::controller {
namespace {

// Enough of why each node was ruled out for `kubectl describe pod` to explain itself.
constexpr std::size_t kReasonsShown = 3;

std::string Percent(const StagingProgress& progress) {
  if (progress.bytes_total <= 0) return "queued";
  // Whole tens: a waiting pod's Event changes ten times over a staging, not a hundred.
  const std::int64_t tens = progress.bytes_done * 10 / progress.bytes_total;
  return fmt::format("{}%", std::clamp<std::int64_t>(tens, 0, 10) * 10);
}

std::string Zone(const PrestageCandidate& cache) {
  const auto zone = cache.labels.find(std::string(kZoneLabel));
  return zone == cache.labels.end() ? std::string() : zone->second;
}

// Names shown in a message before "and N more": a pod's Event stays readable (and under the
// API server's 1 KiB note limit) when a revision is verified on hundreds of nodes.
constexpr std::size_t kNodesNamed = 5;

std::string NodeList(const std::vector<std::string>& nodes) {
  if (nodes.size() <= kNodesNamed) return fmt::format("{}", fmt::join(nodes, ", "));
  return fmt::format("{} and {} more", fmt::join(nodes.begin(), nodes.begin() + kNodesNamed, ", "),
                     nodes.size() - kNodesNamed);
}

// At most kMaxNarrowedNodes of `fits` (sorted by name), sorted by name: those the fewest unbound
// pods are narrowed to, taking zones in turn, then by name.
std::vector<std::string> ChooseNarrowing(const std::vector<const PrestageCandidate*>& fits,
                                         const std::map<std::string, int>& narrowed_pods) {
  const auto pods_on = [&](const PrestageCandidate* cache) {
    const auto found = narrowed_pods.find(cache->name);
    return found == narrowed_pods.end() ? 0 : found->second;
  };
  std::vector<std::string> chosen;
  if (fits.size() <= kMaxNarrowedNodes) {
    for (const PrestageCandidate* cache : fits) chosen.push_back(cache->name);
    return chosen;
  }
  // (pods narrowed there, its turn within its zone among nodes with as many, zone, name): the
  // first node of every zone, then the second of every zone, and so on, least narrowed first.
  // `fits` is in name order, so each node's turn counts the names before it in its group.
  using Key = std::tuple<int, int, std::string, std::string>;
  std::vector<Key> keys;
  std::map<std::pair<int, std::string>, int> turns;
  for (const PrestageCandidate* cache : fits) {
    const int pods = pods_on(cache);
    std::string zone = Zone(*cache);
    const int turn = turns[{pods, zone}]++;
    keys.emplace_back(pods, turn, std::move(zone), cache->name);
  }
  std::partial_sort(keys.begin(), keys.begin() + kMaxNarrowedNodes, keys.end());
  for (std::size_t i = 0; i < kMaxNarrowedNodes; ++i) chosen.push_back(std::get<3>(keys[i]));
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

bool HasRoomFor(const PrestageCandidate& cache, std::int64_t total_bytes) {
  if (cache.held != HeldState::kNone || cache.currently_chosen) return true;
  const std::int64_t free = FreeBytes(cache);
  return free < 0 || free >= total_bytes;
}

}  // namespace

GatePlan PlanGates(const GatePlanRequest& request) {
  GatePlan plan;
  // Two what-if views. `sure`: every pod let go takes its room on each node it may still
  // choose, so a pod let go now fits whatever kube-scheduler picks for the others. `likely`:
  // each takes room on one node, which tells a pod that only waits for those pods to be bound
  // (no staging needed) from one that no Ready node will take.
  NodeRoom sure(request.nodes, request.residents);
  NodeRoom likely(request.nodes, request.residents);
  // `soon`: as `likely`, once the pods being deleted have gone (not those stuck past their
  // grace period).
  NodeRoom soon(request.nodes, request.residents, request.now - kTerminationSlack);
  std::vector<const PrestageCandidate*> ready;
  std::vector<const PrestageCandidate*> others;
  for (const PrestageCandidate& cache : request.caches) {
    (cache.held == HeldState::kReady ? ready : others).push_back(&cache);
  }
  const auto by_name = [](const PrestageCandidate* a, const PrestageCandidate* b) {
    return a->name < b->name;
  };
  std::sort(ready.begin(), ready.end(), by_name);

  std::map<std::string, int> narrowed_pods;  // node -> unbound pods narrowed to it
  for (const UnboundPod& pod : request.unbound) {
    for (const std::string& node : pod.narrowed_to) {
      sure.Take(pod.facts, node);
      ++narrowed_pods[node];
    }
    for (NodeRoom* view : {&likely, &soon}) {
      for (const std::string& node : pod.narrowed_to) {
        if (!view->WhyNot(pod.facts, node)) {
          view->Take(pod.facts, node);
          break;
        }
      }
    }
  }

  std::map<std::string, int> copies_per_zone;
  for (const PrestageCandidate* cache : ready) ++copies_per_zone[Zone(*cache)];
  std::set<std::string> staging;
  std::vector<std::size_t> waiting;
  std::map<std::size_t, std::string> staged_for;  // waiting pod -> the node staging for it
  for (std::size_t index = 0; index < request.gated.size(); ++index) {
    const PodFacts& pod = request.gated[index];
    PodGateDecision decision{.pod = pod.name};
    const auto named = request.adapters.find(pod.name);
    const AdapterReadiness* adapters = named == request.adapters.end() ? nullptr : &named->second;
    // The node holds everything the pod mounts.
    const auto serves = [&](const PrestageCandidate* cache) {
      return adapters == nullptr || adapters->ready_nodes.contains(cache->name);
    };
    std::vector<const PrestageCandidate*> fits;
    for (const PrestageCandidate* cache : ready) {
      if (serves(cache) && !sure.WhyNot(pod, cache->name)) fits.push_back(cache);
    }
    decision.nodes = ChooseNarrowing(fits, narrowed_pods);
    const auto likely_node = std::find_if(ready.begin(), ready.end(), [&](const auto* cache) {
      return serves(cache) && !likely.WhyNot(pod, cache->name);
    });
    const auto soon_node = std::find_if(ready.begin(), ready.end(), [&](const auto* cache) {
      return serves(cache) && !soon.WhyNot(pod, cache->name);
    });
    // Without its adapters: a Ready node that could take it, where they are being staged.
    const auto base_node = adapters == nullptr
                               ? ready.end()
                               : std::find_if(ready.begin(), ready.end(), [&](const auto* cache) {
                                   return !likely.WhyNot(pod, cache->name);
                                 });
    if (soon_node != ready.end()) soon.Take(pod, (*soon_node)->name);
    if (!decision.nodes.empty()) {
      decision.ungate = true;
      decision.message =
          adapters == nullptr
              ? fmt::format("ModelRevision {} is verified on {}", request.revision,
                            NodeList(decision.nodes))
              : fmt::format("ModelRevision {} and adapters {} are verified on {}", request.revision,
                            adapters->adapters, NodeList(decision.nodes));
      if (fits.size() > decision.nodes.size()) {
        decision.message +=
            fmt::format(" (narrowed to {} of the {} nodes that hold it and can take this pod)",
                        decision.nodes.size(), fits.size());
      }
      for (const std::string& node : decision.nodes) {
        sure.Take(pod, node);
        ++narrowed_pods[node];
      }
      // In `likely` it takes room on one of the nodes it may go to.
      const auto target =
          std::find_if(decision.nodes.begin(), decision.nodes.end(),
                       [&](const std::string& node) { return !likely.WhyNot(pod, node); });
      likely.Take(pod, target != decision.nodes.end() ? *target : decision.nodes.front());
    } else if (likely_node != ready.end()) {
      decision.message = fmt::format(
          "waiting for ModelRevision {}: it is verified on {}, which pods let go before this "
          "one may take; they are being scheduled",
          request.revision, (*likely_node)->name);
      likely.Take(pod, (*likely_node)->name);
    } else if (soon_node != ready.end()) {
      decision.message = fmt::format(
          "waiting for ModelRevision {}: it is verified on {}, where a pod being deleted frees "
          "the room",
          request.revision, (*soon_node)->name);
    } else if (base_node != ready.end()) {
      decision.message = fmt::format(
          "waiting for adapters {} on {}, where ModelRevision {} is verified and they are "
          "staged beside it",
          adapters->adapters, (*base_node)->name, request.revision);
      likely.Take(pod, (*base_node)->name);
    } else {
      waiting.push_back(index);
    }
    plan.decisions.push_back(std::move(decision));
  }

  for (std::size_t index : waiting) {
    const PodFacts& pod = request.gated[index];
    PodGateDecision& decision = plan.decisions[index];
    const PrestageCandidate* best = nullptr;
    std::vector<std::string> reasons;
    // Preference: staging it already, asked to hold it already, fewest copies in the zone,
    // most free cache space (unknown last), name.
    auto rank = [&](const PrestageCandidate& cache) {
      const std::int64_t free = FreeBytes(cache);
      return std::make_tuple(cache.held != HeldState::kStaging, !staging.contains(cache.name),
                             !cache.currently_chosen, copies_per_zone[Zone(cache)], free < 0, -free,
                             cache.name);
    };
    for (const PrestageCandidate* cache : others) {
      std::optional<std::string> why = likely.WhyNot(pod, cache->name);
      if (!why && !HasRoomFor(*cache, request.total_bytes)) {
        why = "has no room in its model cache";
      }
      if (why) {
        if (reasons.size() < kReasonsShown) reasons.push_back(cache->name + " " + *why);
        continue;
      }
      if (best == nullptr || rank(*cache) < rank(*best)) best = cache;
    }
    for (const PrestageCandidate* cache : ready) {
      if (reasons.size() >= kReasonsShown) break;
      if (auto why = likely.WhyNot(pod, cache->name)) {
        reasons.push_back(cache->name + " (holds it) " + *why);
      }
    }
    if (best == nullptr) {
      decision.message = fmt::format(
          "waiting for ModelRevision {}: no node can take this pod and hold the revision{}{}",
          request.revision, reasons.empty() ? "" : ": ", fmt::join(reasons, "; "));
      continue;
    }
    if (staging.insert(best->name).second) ++copies_per_zone[Zone(*best)];
    likely.Take(pod, best->name);
    staged_for.emplace(index, best->name);
  }
  for (const auto& [index, node] : staged_for) {
    const auto progress = request.progress.find(node);
    plan.decisions[index].message = fmt::format(
        "waiting for ModelRevision {} on {} more node{}: {} staging {}", request.revision,
        staging.size(), staging.size() == 1 ? "" : "s", node,
        progress == request.progress.end() ? std::string("queued") : Percent(progress->second));
  }
  plan.staging_nodes.assign(staging.begin(), staging.end());
  return plan;
}

}  // namespace modelplane::controller
