#include "operator/controllers/pod_gates.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "core/api/model_cache.h"
#include "core/api/object_key.h"
#include "core/api/serving_pod.h"
#include "core/json/json_lookup.h"
#include "core/kube/object_store.h"
#include "core/workqueue/run_concurrently.h"
#include "operator/controllers/pod_adapters.h"
#include "operator/gating/gate_patch.h"
#include "operator/gating/serving_pods.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

// Far longer than a watch takes to deliver a pod's update; a memory of a pod that vanished
// without an event must not outlive it for long.
constexpr auto kLetGoMemory = std::chrono::seconds(60);

std::string PodString(const json& pod, std::string_view key) {
  return core::StringMember(pod, {"metadata", key});
}

std::string NodeNameOf(const json& pod) {
  return core::StringMember(pod, {"spec", "nodeName"});
}

// Oldest first (then by name), so pods created first are let go first.
bool OlderFirst(const json* a, const json* b) {
  const std::string created_a = PodString(*a, "creationTimestamp");
  const std::string created_b = PodString(*b, "creationTimestamp");
  if (created_a != created_b) return created_a < created_b;
  return PodString(*a, "name") < PodString(*b, "name");
}

json Regarding(const json& pod) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", PodString(pod, "name")},
            {"namespace", PodString(pod, "namespace")},
            {"uid", PodString(pod, "uid")},
            {"resourceVersion", PodString(pod, "resourceVersion")}}}};
}

}  // namespace

std::optional<std::vector<std::string>> PodGates::LetGoTo(const std::string& uid) {
  std::lock_guard lock(let_go_mutex_);
  const auto now = context_.clock.Now();
  for (auto entry = let_go_.begin(); entry != let_go_.end();) {
    entry = now - entry->second.at > kLetGoMemory ? let_go_.erase(entry) : std::next(entry);
  }
  const auto found = let_go_.find(uid);
  if (found == let_go_.end()) return std::nullopt;
  return found->second.nodes;
}

void PodGates::ForgetLetGo(const std::string& uid) {
  std::lock_guard lock(let_go_mutex_);
  let_go_.erase(uid);
}

RevisionGates PodGates::Plan(const std::string& revision_key, const std::string& digest,
                             std::int64_t total_bytes, const std::vector<PrestageCandidate>& caches,
                             const std::map<std::string, std::string>& held) {
  RevisionGates gates;
  GatePlanRequest request{.revision = revision_key, .total_bytes = total_bytes, .caches = caches};
  request.now = context_.clock.WallNow();
  std::vector<const json*> gated;
  std::set<std::string> bound;
  const std::vector<core::ObjectPtr> pods =
      context_.pods.store().ByIndex(kPodsByRevision, revision_key);
  for (const core::ObjectPtr& pod : pods) {
    const std::string uid = PodString(*pod, "uid");
    if (HasWeightsGate(*pod)) {
      if (auto nodes = LetGoTo(uid)) {
        // Let go by an earlier pass; the watch has not delivered it yet.
        request.unbound.push_back({.facts = ReadPodFacts(*pod), .narrowed_to = std::move(*nodes)});
      } else {
        gated.push_back(pod.get());
      }
      continue;
    }
    ForgetLetGo(uid);
    if (const std::string node = NodeNameOf(*pod); !node.empty()) bound.insert(node);
  }
  gates.bound_nodes.assign(bound.begin(), bound.end());
  if (gated.empty()) return gates;

  for (const core::ObjectPtr& node_object : context_.nodes.store().List()) {
    auto node = ReadNodeFacts(*node_object);
    if (!node) continue;
    std::vector<PodFacts>& residents = request.residents[node->name];
    for (const core::ObjectPtr& pod : context_.pods.store().ByIndex(kPodsByNode, node->name)) {
      residents.push_back(ReadPodFacts(*pod));
    }
    request.nodes.push_back(std::move(*node));
  }
  // By name: a popular revision is Ready on thousands of nodes, and a scan of every node for
  // each of them would be quadratic in the cluster's size.
  std::unordered_map<std::string_view, const NodeFacts*> nodes_by_name;
  for (const NodeFacts& node : request.nodes) nodes_by_name.emplace(node.name, &node);
  std::vector<NodeFacts> ready_nodes;
  for (const PrestageCandidate& cache : caches) {
    if (cache.held != HeldState::kReady) continue;
    if (const auto node = nodes_by_name.find(cache.name); node != nodes_by_name.end()) {
      ready_nodes.push_back(*node->second);
    }
  }
  for (const core::ObjectPtr& pod : pods) {
    if (HasWeightsGate(*pod) || !NodeNameOf(*pod).empty()) continue;
    PodFacts facts = ReadPodFacts(*pod);
    if (facts.terminal) continue;
    std::vector<std::string> narrowed = NodesAdmitted(facts, ready_nodes);
    request.unbound.push_back({.facts = std::move(facts), .narrowed_to = std::move(narrowed)});
  }
  for (const core::ObjectPtr& cache_object : context_.caches.store().List()) {
    const auto cache = context_.parsed_caches.Get(cache_object);
    if (!*cache || !(*cache)->status) continue;
    for (const auto& entry : (*cache)->status->revisions) {
      if (entry.digest == digest && entry.state != core::api::kCacheStateReady) {
        request.progress[(*cache)->metadata.name] = {.bytes_done = entry.bytes_done,
                                                     .bytes_total = entry.bytes_total};
      }
    }
  }
  std::sort(gated.begin(), gated.end(), OlderFirst);
  // Held back whatever the nodes hold, with what to tell them.
  std::vector<std::pair<GatedPod, std::string>> waiting;
  PodAdapterReader adapters(context_.revisions.store(), context_.caches.store(),
                            context_.parsed_caches, revision_key, digest);
  for (const json* pod : gated) {
    GatedPod planned{.pod = *pod,
                     .annotations = {{std::string(core::api::kRevisionDigestAnnotation), digest}}};
    if (auto reason = held.find(PodString(*pod, "uid")); reason != held.end()) {
      waiting.emplace_back(std::move(planned), reason->second);
      continue;
    }
    if (std::optional<PodAdapters> named = adapters.Read(*pod)) {
      if (named->hold) {
        planned.wait_type = named->hold->type;
        planned.wait_reason = named->hold->reason;
        waiting.emplace_back(std::move(planned), std::move(named->hold->message));
        continue;
      }
      request.adapters[PodString(*pod, "name")] = std::move(named->readiness);
      planned.annotations[std::string(core::api::kLoraModulesAnnotation)] =
          std::move(named->lora_modules);
    }
    request.gated.push_back(ReadPodFacts(*pod));
    gates.gated.push_back(std::move(planned));
  }
  gates.plan = PlanGates(request);
  for (auto& [pod, message] : waiting) {
    gates.plan.decisions.push_back(
        {.pod = PodString(pod.pod, "name"), .message = std::move(message)});
    gates.gated.push_back(std::move(pod));
  }
  return gates;
}

core::Status PodGates::Apply(const std::string& revision_key, const RevisionGates& gates) {
  // Most revisions have no gated pods: do not read every node for nothing.
  if (gates.plan.decisions.empty()) return core::Ok();
  std::optional<core::Error> first_error;
  std::map<std::string, NodeFacts> nodes;
  for (const core::ObjectPtr& node_object : context_.nodes.store().List()) {
    if (auto node = ReadNodeFacts(*node_object)) nodes.emplace(node->name, std::move(*node));
  }
  std::mutex first_error_mutex;
  // Each pod is a patch and an Event: several pods at once, or a rollout of 32 replicas lets
  // its last pod go many seconds after its first on a busy API server.
  core::RunConcurrently(
      gates.plan.decisions.size(), core::kConcurrentApiWrites, [&](std::size_t i) {
        const PodGateDecision& decision = gates.plan.decisions[i];
        const GatedPod& gated = gates.gated[i];
        const json& pod = gated.pod;
        const std::string pod_key = core::api::ObjectKey(PodString(pod, "namespace"), decision.pod);
        if (!decision.ungate) {
          Report(pod, gated.wait_type, gated.wait_reason, decision.message);
          return;
        }
        std::vector<NodeFacts> targets;
        for (const std::string& name : decision.nodes) {
          if (auto found = nodes.find(name); found != nodes.end()) targets.push_back(found->second);
        }
        auto patch = UngatePatch(pod, targets, gated.annotations);
        if (!patch) {
          Report(pod, "Warning", "CannotNarrow", patch.error().message());
          return;
        }
        auto patched = context_.client.Patch(core::resources::Pods(), PodString(pod, "namespace"),
                                             decision.pod, core::PatchType::kJson, *patch);
        if (!patched) {
          if (patched.error().code() == core::ErrorCode::kNotFound) return;
          context_.logger.Warn("pod_ungate_failed", {{"pod", pod_key},
                                                     {"revision", revision_key},
                                                     {"error", patched.error().ToString()}});
          const std::lock_guard lock(first_error_mutex);
          if (!first_error) first_error = patched.error();
          return;
        }
        {
          std::lock_guard lock(let_go_mutex_);
          let_go_[PodString(pod, "uid")] = {.nodes = decision.nodes, .at = context_.clock.Now()};
        }
        context_.logger.Info("pod_ungated",
                             {{"pod", pod_key},
                              {"revision", revision_key},
                              {"nodes", fmt::format("{}", fmt::join(decision.nodes, ","))}});
        Report(pod, "Normal", "WeightsVerified",
               decision.message + "; scheduling gate removed, the pod may run only there");
      });
  if (first_error) return std::unexpected(*first_error);
  return core::Ok();
}

void PodGates::ReportBlocked(const std::string& revision_key, const std::string& type,
                             const std::string& reason, const std::string& message) {
  for (const core::ObjectPtr& pod :
       context_.pods.store().ByIndex(kGatedPodsByRevision, revision_key)) {
    Report(*pod, type, reason, message);
  }
}

void PodGates::Report(const json& pod, const std::string& type, const std::string& reason,
                      const std::string& message) {
  (void)reporter_.Report(Regarding(pod), type, reason, "Gate", message);
}

}  // namespace modelplane::controller
