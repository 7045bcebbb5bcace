// The contract between a serving pod and modelplane: the annotations a pod sets, and the
// scheduling gate, readiness gate, volume and environment the admission webhook injects. Every
// component that reads or writes these on pods takes the names from here.
//
//   metadata.annotations:
//     modelplane.io/revision: llama-r2          the ModelRevision, in the pod's own namespace
//     modelplane.io/mount-path: /models/llama   where containers see it (default /models/<name>)
//     modelplane.io/containers: server,warmup   only these containers get the mount (default all)
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/api/model_cache.h"
#include "core/error/error.h"

namespace modelplane::core::api {

inline constexpr std::string_view kRevisionAnnotation = "modelplane.io/revision";
inline constexpr std::string_view kMountPathAnnotation = "modelplane.io/mount-path";
inline constexpr std::string_view kContainersAnnotation = "modelplane.io/containers";
// Written by the webhook: the revision digest it found, or "pending" when the revision did not
// exist yet. Tells a reader (and a second admission pass) that the pod was injected.
inline constexpr std::string_view kInjectedAnnotation = "modelplane.io/injected";

// The scheduling gate the operator removes once the weights are verified where the pod may go.
inline constexpr std::string_view kWeightsSchedulingGate = "modelplane.io/weights";
// The readiness-gate condition the node agent sets while the weights are verified on the node.
inline constexpr std::string_view kWeightsReadyCondition = "modelplane.io/weights-ready";

inline constexpr std::string_view kCsiDriverName = "csi.modelplane.io";
inline constexpr std::string_view kWeightsVolumeName = "modelplane-weights";
// Volume attribute naming the revision; the namespace comes from kubelet's pod info, never from
// an attribute a pod author could set.
inline constexpr std::string_view kRevisionVolumeAttribute = "modelplane.io/revision";
// Environment variable with the mount path, so an engine can take `--model $(MODELPLANE_MODEL)`.
inline constexpr std::string_view kModelPathEnvironment = "MODELPLANE_MODEL";
// The revision digest ("sha256:<hex>") of the weights a serving pod runs: written by the
// webhook when it knows it and by the operator in the patch that lets the pod go, and handed to
// every container that mounts the weights as an environment variable read from the annotation
// (the downward API, resolved when the container starts, after the pod was let go). Engines
// key their caches by content with it instead of by model name (docs/serving-pods.md).
inline constexpr std::string_view kRevisionDigestAnnotation = "modelplane.io/revision-digest";
inline constexpr std::string_view kRevisionDigestEnvironment = "MODELPLANE_REVISION_DIGEST";

inline constexpr std::string_view kDefaultMountRoot = "/models";

// A DNS-1123 subdomain, as Kubernetes requires of namespaces and ModelRevision names.
[[nodiscard]] bool IsObjectName(std::string_view name);

// Reads the revision annotation's value (or the CSI volume attribute of the same name): "<name>"
// or "<pod_namespace>/<name>". kInvalidArgument, with a message a pod author can act on, when it
// names nothing; kPermissionDenied when it names a revision of another namespace: a pod uses
// only its own namespace's revisions, at every step (the webhook, the operator, the extender,
// the agent and the CSI plugin all read it here), whatever was edited after admission.
[[nodiscard]] Result<RevisionReference> ParseRevisionAnnotation(std::string_view value,
                                                                std::string_view pod_namespace);

// "/models/<name>".
[[nodiscard]] std::string DefaultMountPath(std::string_view revision_name);

}  // namespace modelplane::core::api
