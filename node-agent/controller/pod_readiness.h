// Which pods on this node wait for model weights, and the status patch that lets them go Ready.
//
// A serving pod names its revision in the annotation `modelplane.io/revision` (read by
// core::api::ParseRevisionAnnotation; only a revision of the pod's own namespace counts) and lists
// the readiness gate `modelplane.io/weights-ready`. Kubernetes keeps such a pod unready until that
// condition is True; the node agent sets it once the revision is verified in the node's cache.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/api/model_cache.h"
#include "core/api/serving_pod.h"
#include "core/kube/builtin_types.h"

namespace modelplane::agent {

// The revision a pod names in its annotation, gated or not; nullopt when the annotation is
// missing, names nothing valid, or names a revision in another namespace.
[[nodiscard]] std::optional<core::api::RevisionReference> NamedRevision(const core::Pod& pod);
// The revision a gated pod waits for; nullopt when the pod is not ours to gate.
[[nodiscard]] std::optional<core::api::RevisionReference> GatedRevision(const core::Pod& pod);
// Neither Succeeded nor Failed: its containers may still read the weights.
[[nodiscard]] bool PodIsLive(const core::Pod& pod);

[[nodiscard]] bool WeightsReadyIsTrue(const core::Pod& pod);

// A strategic-merge patch for pods/status: conditions merge by type.
[[nodiscard]] nlohmann::json WeightsReadyPatch(std::string_view digest, std::string_view tier,
                                               std::string_view now_rfc3339);
// The same condition set False again: the readiness gate is the second protection after the
// scheduling gate, so a pod whose weights went away (manifest gone, revision revoked) stops
// receiving traffic. `reason` is CamelCase (kReasonWeightsNotVerified, kReasonRevisionRevoked).
[[nodiscard]] nlohmann::json WeightsNotReadyPatch(std::string_view reason, std::string_view message,
                                                  std::string_view now_rfc3339);

inline constexpr std::string_view kReasonWeightsNotVerified = "WeightsNotVerified";
inline constexpr std::string_view kReasonRevisionRevoked = "RevisionRevoked";

}  // namespace modelplane::agent
