// The one patch that lets a gated pod go: it narrows the pod's required node affinity to the
// nodes that hold its weights and removes modelplane's scheduling gate, as KEP-3838 allows for
// a pod that is still gated (both in one write, so the pod is never schedulable un-narrowed).
//
// The API server accepts only additions to existing node selector terms, so:
//   - a pod without required node affinity gets one term per node, each `metadata.name In [n]`
//     (field selectors on a node name take exactly one value);
//   - a pod with terms gets `kubernetes.io/hostname In [...]` added to every term, so each of
//     its own terms still holds and all of them are narrowed.
// The patch carries the resourceVersion it was computed from, which the API server treats as a
// precondition: a pod changed since gets 409 Conflict instead of a stale narrowing.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error/error.h"
#include "operator/gating/scheduling_facts.h"

namespace modelplane::controller {

// The same patch writes `annotations` (name -> value: the revision's digest into
// modelplane.io/revision-digest, the adapters' modelplane.io/lora-modules) where the pod says
// otherwise, so the containers, which start after it, read what they were let go for.
// kInvalidArgument when the pod carries no modelplane gate, when there is no node, or when
// narrowing by hostname is needed and none of the nodes has a hostname label.
[[nodiscard]] core::Result<nlohmann::json> UngatePatch(
    const nlohmann::json& pod, const std::vector<NodeFacts>& nodes,
    const std::map<std::string, std::string>& annotations = {});

// The node names a pod's required node affinity admits when it names nodes explicitly (the
// narrowing above), or every name in `known` that its terms admit.
[[nodiscard]] std::vector<std::string> NodesAdmitted(const PodFacts& pod,
                                                     const std::vector<NodeFacts>& known);

}  // namespace modelplane::controller
