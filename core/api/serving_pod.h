// The contract between a serving pod and modelplane: the annotations a pod sets, and the
// scheduling gate, readiness gate, volume and environment the admission webhook injects. Every
// component that reads or writes these on pods takes the names from here.
//
//   metadata.annotations:
//     modelplane.io/revision: llama-r2          the ModelRevision, in the pod's own namespace
//     modelplane.io/mount-path: /models/llama   where containers see it (default /models/<name>)
//     modelplane.io/containers: server,warmup   only these containers get the mount (default all)
//     modelplane.io/adapters: sql-lora,chat-lora LoRA adapter ModelRevisions, same namespace
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

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

// LoRA adapters (docs/serving-pods.md, "LoRA adapters"). Each adapter the pod names (an adapter
// ModelRevision: spec.base set) gets its own read-only CSI volume, kAdapterVolumePrefix and its
// place in the list, mounted beside the base (AdapterMountPath) in the containers that mount
// the base. The pod is let go only to nodes where the base and every adapter are verified.
inline constexpr std::string_view kAdaptersAnnotation = "modelplane.io/adapters";
// A few adapters per replica is what serving engines keep loaded at once (vLLM's --max-loras
// defaults to 1); the bound keeps a pod's volumes and its gating pass small.
inline constexpr std::size_t kMaxAdapters = 8;
inline constexpr std::string_view kAdapterVolumePrefix = "modelplane-adapter-";
// vLLM's --lora-modules value for the pod's adapters, "<engine name>=<mount path>" each,
// space-separated: written by the webhook when every adapter's digest is known and by the
// operator in the patch that lets the pod go otherwise (a value the author wrote is dropped),
// and handed to the containers that mount the base as MODELPLANE_LORA_MODULES through the
// downward API, as the revision digest is.
inline constexpr std::string_view kLoraModulesAnnotation = "modelplane.io/lora-modules";
inline constexpr std::string_view kLoraModulesEnvironment = "MODELPLANE_LORA_MODULES";
// Hex digits of an adapter's digest in the name an engine serves it under: enough that two
// adapters' weights never meet under one name in practice, short enough to type in a request.
inline constexpr std::size_t kAdapterDigestHexInName = 12;

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

// Where a pod's revision is mounted: modelplane.io/mount-path of `annotations` (the pod's
// metadata.annotations) when it is a string, DefaultMountPath otherwise. The webhook mounts
// there and the operator derives the adapters' paths from it, so both read it here.
[[nodiscard]] std::string MountPathOf(const nlohmann::json& annotations,
                                      std::string_view revision_name);

// The items of a comma-separated annotation (modelplane.io/containers, modelplane.io/adapters),
// trimmed of blanks, empty items left out.
[[nodiscard]] std::vector<std::string> SplitAnnotationList(std::string_view value);

// Reads the adapters annotation's value: "<name>,<name>", each "<name>" or
// "<pod_namespace>/<name>" as in the revision annotation, behind the same namespace wall
// (kPermissionDenied for another namespace's). kInvalidArgument for a name that names nothing,
// more than kMaxAdapters, a name listed twice, or the pod's own revision (`revision_name`).
[[nodiscard]] Result<std::vector<RevisionReference>> ParseAdaptersAnnotation(
    std::string_view value, std::string_view pod_namespace, std::string_view revision_name);

// "modelplane-adapter-<index>": volume names are DNS labels of at most 63 characters, which an
// adapter's name (a subdomain of up to 253) need not be.
[[nodiscard]] std::string AdapterVolumeName(std::size_t index);

// "<folder of the base's mount path>/adapters/<adapter name>": /models/adapters/sql-lora beside
// /models/llama-r1. Outside the base's mount, which is read-only and could not hold a mount
// point.
[[nodiscard]] std::string AdapterMountPath(std::string_view base_mount_path,
                                           std::string_view adapter_name);

// "<adapter name>-<first kAdapterDigestHexInName hex digits of its digest>": the name the
// engine serves the adapter under. New weights under the same ModelRevision name are a new
// digest and so a new name, so no client, router or prefix cache keyed by the name meets the
// old weights' results under it.
[[nodiscard]] std::string AdapterEngineName(std::string_view adapter_name, std::string_view digest);

struct LoraModule {
  std::string name;  // AdapterEngineName
  std::string path;  // AdapterMountPath
};
// vLLM's --lora-modules format: "name=path name=path".
[[nodiscard]] std::string LoraModulesValue(const std::vector<LoraModule>& modules);

}  // namespace modelplane::core::api
