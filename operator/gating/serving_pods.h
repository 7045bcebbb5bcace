// How the operator watches serving pods: a cluster-wide informer of non-terminal pods (the gate
// planner needs every pod bound to a node to know the node's free room), trimmed to the fields
// it reads, and indexed by the revision a pod names.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kube/object_store.h"

namespace modelplane::controller {

// Pod index: spec.nodeName (core::indexers::ByNodeName).
inline constexpr char kPodsByNode[] = "spec.nodeName";
// Pod index: "namespace/name" of the revision its annotation names (every such pod).
inline constexpr char kPodsByRevision[] = "modelplane.io/pod-revision";
// Pod index: the same, only for pods that still carry modelplane's scheduling gate.
inline constexpr char kGatedPodsByRevision[] = "modelplane.io/gated-pod-revision";
// Pod index: "namespace/name" of each LoRA adapter (modelplane.io/adapters) a pod that still
// carries modelplane's scheduling gate names.
inline constexpr char kGatedPodsByAdapter[] = "modelplane.io/gated-pod-adapter";

// Succeeded and Failed pods hold nothing; the informer leaves them out.
inline constexpr char kNonTerminalPods[] = "status.phase!=Succeeded,status.phase!=Failed";

// Keeps what scheduling and gating read: names, labels, modelplane's annotations, owner
// references, timestamps; the spec's node, scheduler, gates, selectors, affinity, tolerations,
// overhead and each container's resources; the phase and the Ready and weights-ready
// conditions. About a tenth of a typical pod.
[[nodiscard]] nlohmann::json TrimPod(nlohmann::json pod);

[[nodiscard]] bool HasWeightsGate(const nlohmann::json& pod);
// "namespace/name" of the revision the pod's annotation names; nullopt without one or when it
// names nothing.
[[nodiscard]] std::optional<std::string> RevisionKeyOfPod(const nlohmann::json& pod);

[[nodiscard]] core::IndexFunction PodsByRevisionIndex();
[[nodiscard]] core::IndexFunction GatedPodsByRevisionIndex();
[[nodiscard]] core::IndexFunction GatedPodsByAdapterIndex();

// The revisions (keys) that gated pods waiting for any of `adapter_keys` name in
// modelplane.io/revision: those pods are planned in their revision's pass, so whoever sees an
// adapter change (the adapter itself, its Ready copies) wakes these. `pods` must carry the
// kGatedPodsByAdapter index.
[[nodiscard]] std::vector<std::string> RevisionsWaitingForAdapters(
    const core::ObjectStore& pods, const std::vector<std::string>& adapter_keys);

}  // namespace modelplane::controller
