// What the admission webhook does to a serving pod: the pure decision and mutation, tested
// without a server.
//
// A pod whose annotation modelplane.io/revision names a ModelRevision in its namespace gets,
// unless it already has them (a second admission pass or a reinvocation changes nothing):
//   - the scheduling gate modelplane.io/weights (the operator removes it once the weights are
//     verified where the pod may go, and narrows the pod to those nodes);
//   - the readiness gate modelplane.io/weights-ready (the node agent keeps it True only while
//     the weights are verified on the pod's node);
//   - spec.schedulerName set to the modelplane scheduler when the pod names none (the API
//     server defaults an unnamed scheduler to "default-scheduler" before admission, so that
//     name counts as none; any other name is kept);
//   - a read-only volume with the revision's files: an ephemeral CSI volume of csi.modelplane.io
//     (or, in hostPath mode, the node cache's folder view of the revision), mounted read-only at
//     modelplane.io/mount-path (default /models/<revision>) in every container, or in those the
//     modelplane.io/containers annotation lists, with MODELPLANE_MODEL set to that path;
//   - the annotation modelplane.io/injected (the digest, or "pending");
//   - the annotation modelplane.io/revision-digest (the digest; absent while pending: the
//     operator writes it in the patch that lets the pod go), and MODELPLANE_REVISION_DIGEST,
//     read from it through the downward API, in every container that mounts the weights;
//   - for each LoRA adapter modelplane.io/adapters names, a read-only volume of its own mounted
//     beside the base in the same containers, and MODELPLANE_LORA_MODULES read from the
//     annotation modelplane.io/lora-modules, which is written when every adapter's digest is
//     known (absent otherwise: the operator writes it as it lets the pod go).
// It refuses, with a message a pod author can act on, a pod naming an invalid or revoked
// revision or adapter, one in another namespace, a malformed annotation, an unknown container, a
// mount path that is not absolute or collides with a mount the container has, an adapter that
// is not an adapter revision, and one made for another base than the revision's. A revision or
// adapter that does not exist yet is admitted gated, with a warning (Helm creates custom
// resources after Deployments; refusing would put ReplicaSets into backoff), except in hostPath
// mode, which needs the digest.
// Thread safety: pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace modelplane::controller {

// What the webhook knows of the named revision.
struct RevisionLookup {
  enum class State { kMissing, kInvalid, kRevoked, kValid };
  State state = State::kMissing;
  std::string digest;       // kValid: "sha256:<hex>"
  std::string base_digest;  // kValid: spec.base.digest of an adapter revision; empty otherwise
  std::string problem;      // kInvalid: what is wrong with it
};

enum class WeightsVolumeMode { kCsi, kHostPath };

struct InjectionOptions {
  std::string scheduler_name = "modelplane-scheduler";  // empty: leave schedulerName alone
  WeightsVolumeMode volume_mode = WeightsVolumeMode::kCsi;
  std::string host_cache_root = "/var/lib/modelplane/cache";  // hostPath mode
  // The namespace the operator serves ("" = all): a pod elsewhere is left alone (no controller
  // would ever let it go), with a warning.
  std::string namespace_scope;
};

struct InjectionResult {
  bool allowed = true;
  std::string message;                // why it was refused
  std::optional<nlohmann::json> pod;  // the mutated pod, when anything changed
  std::vector<std::string> warnings;  // shown by kubectl
  std::string revision;               // "namespace/name", for logs
  std::string outcome;                // metrics label: injected, unchanged, waiting, refused
};

// `lookup` is called once for each revision the pod names (its revision, then its adapters),
// with the revision's namespace and name.
using RevisionLookupFunction =
    std::function<RevisionLookup(const std::string& namespace_name, const std::string& name)>;

[[nodiscard]] InjectionResult InjectServingPod(const nlohmann::json& pod,
                                               const std::string& pod_namespace,
                                               const RevisionLookupFunction& lookup,
                                               const InjectionOptions& options);

}  // namespace modelplane::controller
