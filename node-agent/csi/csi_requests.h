// Turns the CSI node requests kubelet sends into the plugin's own requests, refusing anything
// malformed with kInvalidArgument (INVALID_ARGUMENT on the wire) and a message that says what
// to fix. Nothing here touches the disk or the cluster.
//
// NodePublishVolume, for an ephemeral inline volume (the only kind the CSIDriver object allows):
//   volume_id, target_path, volume_capability   required
//   access type                                 mount (block is refused: a revision is files)
//   access mode                                 any defined one: kubelet sends
//                                               SINGLE_NODE_WRITER for inline volumes; the
//                                               mount is read-only whatever it says
//   volume_context["modelplane.io/revision"]    the ModelRevision's name, in the pod's
//                                               namespace ("<pod namespace>/<name>" also works)
//   volume_context["csi.storage.k8s.io/..."]    kubelet's pod info (podInfoOnMount):
//                                               pod.namespace and pod.name required,
//                                               ephemeral must be "true"
// The namespace always comes from kubelet's pod info, never from an attribute the pod's author
// wrote: a revision naming another namespace is refused.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "core/api/serving_pod.h"
#include "core/error/error.h"
#include "csi.pb.h"
#include "node-agent/csi/volume_publisher.h"

namespace modelplane::agent {

// The driver's name and the revision attribute are the webhook's contract (core/api/serving_pod.h).
inline constexpr std::string_view kCsiPluginName = core::api::kCsiDriverName;
inline constexpr std::string_view kRevisionVolumeAttribute = core::api::kRevisionVolumeAttribute;
// kubelet's, with podInfoOnMount.
inline constexpr std::string_view kPodNamespaceAttribute = "csi.storage.k8s.io/pod.namespace";
inline constexpr std::string_view kPodNameAttribute = "csi.storage.k8s.io/pod.name";
inline constexpr std::string_view kPodUidAttribute = "csi.storage.k8s.io/pod.uid";
inline constexpr std::string_view kEphemeralAttribute = "csi.storage.k8s.io/ephemeral";

[[nodiscard]] core::Result<PublishRequest> ParsePublishRequest(
    const csi::v1::NodePublishVolumeRequest& request);
[[nodiscard]] core::Result<UnpublishRequest> ParseUnpublishRequest(
    const csi::v1::NodeUnpublishVolumeRequest& request);

}  // namespace modelplane::agent
