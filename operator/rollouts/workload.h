// A Deployment or StatefulSet as rollouts see it: which ModelRevision its pod template names
// now, which one it named before its latest rollout (what `kubectl rollout undo` returns to),
// whether that rollout is complete, and how to tell its pods.
//
// The history comes from the objects Kubernetes keeps for undo: a Deployment's ReplicaSets
// (ordered by deployment.kubernetes.io/revision) and a StatefulSet's ControllerRevisions
// (ordered by .revision). The previous revision is the newest older entry whose template names
// a different ModelRevision, so a rollout that changed only the image keeps pointing at the
// model before.
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace modelplane::controller {

inline constexpr std::string_view kKindDeployment = "Deployment";
inline constexpr std::string_view kKindStatefulSet = "StatefulSet";

struct Workload {
  std::string kind;  // Deployment | StatefulSet
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::int32_t replicas = 1;
  // ModelRevision names in the workload's namespace; empty when none is named.
  std::string current_revision;
  std::string previous_revision;
  // Every replica runs the current template and is available, for the current generation.
  bool complete = false;
  bool paused = false;
  // Deployment RollingUpdate maxSurge, resolved against replicas (rounded up, as Kubernetes
  // does); 0 for StatefulSets, which replace pods in place.
  std::int32_t max_surge = 0;
  std::map<std::string, std::string> node_selector;  // of the pod template

  [[nodiscard]] std::string Key() const { return kind + "/" + namespace_name + "/" + name; }

  friend bool operator==(const Workload&, const Workload&) = default;
};

// `replica_sets`: those the Deployment owns (controller owner reference with its uid).
[[nodiscard]] std::optional<Workload> ReadDeployment(
    const nlohmann::json& deployment, const std::vector<const nlohmann::json*>& replica_sets);
// `history`: the ControllerRevisions the StatefulSet owns.
[[nodiscard]] std::optional<Workload> ReadStatefulSet(
    const nlohmann::json& stateful_set, const std::vector<const nlohmann::json*>& history);

// The ModelRevision name a pod template's annotations name (in the workload's namespace), or
// "" when they name none or one in another namespace (the webhook refuses those pods).
[[nodiscard]] std::string TemplateRevision(const nlohmann::json& pod_template,
                                           const std::string& namespace_name);

// Keeps what workload.h reads, so the informers hold a fraction of each object.
[[nodiscard]] nlohmann::json TrimWorkload(nlohmann::json object);

}  // namespace modelplane::controller
