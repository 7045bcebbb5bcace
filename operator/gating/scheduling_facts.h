// What the gate controller needs to know about a pod's scheduling constraints and a node's
// offer, read from the API objects: enough to predict which nodes kube-scheduler could bind a
// pod to, so that narrowing a gated pod's node affinity never points it only at nodes where it
// cannot run (full, tainted, excluded by its selector, or holding a pod it must avoid).
//
// Modelled, as kube-scheduler's filters do it: resource requests (containers, init containers,
// sidecars, overhead, the pod count), nodeSelector, required node affinity (matchExpressions
// with In / NotIn / Exists / DoesNotExist / Gt / Lt, matchFields on metadata.name), taints with
// NoSchedule / NoExecute against tolerations (the cordon taint included), and required pod
// anti-affinity over kubernetes.io/hostname in both directions. Not modelled (kube-scheduler
// still applies them among the narrowed nodes): anti-affinity over other topology keys,
// namespace selectors other than "all", pod affinity, topology spread constraints, volumes.
// Thread safety: plain values and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace modelplane::controller {

inline constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

// Resource name -> thousandths of a unit ("cpu" in millicores, "memory" in milli-bytes).
using ResourceList = std::map<std::string, std::int64_t>;

struct SelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist (labels); also Gt, Lt (node labels)
  std::vector<std::string> values;
};

// A node selector term: every requirement must hold. Field requirements name metadata.name.
struct NodeSelectorTerm {
  std::vector<SelectorRequirement> label_requirements;
  std::vector<SelectorRequirement> field_requirements;
};

// metav1.LabelSelector. `matches_nothing` for a selector that cannot be read.
struct LabelSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<SelectorRequirement> requirements;
  bool matches_nothing = false;
};

// A required pod anti-affinity term over kubernetes.io/hostname.
struct HostAntiAffinity {
  LabelSelector selector;
  std::vector<std::string> namespaces;  // empty with all_namespaces false: the pod's own
  bool all_namespaces = false;          // namespaceSelector: {}
};

struct Toleration {
  std::string key;
  std::string op;  // Exists, Equal
  std::string value;
  std::string effect;  // empty: every effect
};

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
};

struct PodFacts {
  std::string namespace_name;
  std::string name;
  std::string node_name;  // bound to, or empty
  std::map<std::string, std::string> labels;
  ResourceList requests;  // includes "pods": 1000 (one pod)
  std::map<std::string, std::string> node_selector;
  std::vector<NodeSelectorTerm> required_terms;  // ORed; empty: any node
  std::vector<Toleration> tolerations;
  std::vector<HostAntiAffinity> host_anti_affinity;
  bool terminal = false;  // Succeeded or Failed: holds nothing on its node
  // Being deleted (metadata.deletionTimestamp, when its grace period ends): it holds its room
  // until it is gone, which a rolling update's next pod may wait for.
  std::optional<std::chrono::system_clock::time_point> deletion_deadline;
};

struct NodeFacts {
  std::string name;
  std::map<std::string, std::string> labels;
  ResourceList allocatable;
  std::vector<Taint> taints;
  bool ready = false;
  bool unschedulable = false;
};

[[nodiscard]] PodFacts ReadPodFacts(const nlohmann::json& pod);
[[nodiscard]] std::optional<NodeFacts> ReadNodeFacts(const nlohmann::json& node);

[[nodiscard]] bool Matches(const LabelSelector& selector,
                           const std::map<std::string, std::string>& labels);
[[nodiscard]] bool Matches(const NodeSelectorTerm& term, const NodeFacts& node);

// Why the pod can never run on the node whatever runs there (selector, affinity, taints,
// cordon, not Ready), or nullopt when it could.
[[nodiscard]] std::optional<std::string> StaticMismatch(const PodFacts& pod, const NodeFacts& node);

// Whether the pod's anti-affinity, or that of a pod already there, keeps them apart.
[[nodiscard]] bool AntiAffinityConflict(const PodFacts& incoming, const PodFacts& resident);

}  // namespace modelplane::controller
