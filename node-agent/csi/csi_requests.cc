#include "node-agent/csi/csi_requests.h"

#include <fmt/format.h>

namespace modelplane::agent {
namespace {

// CSI asks plugins to accept ids of at least 128 bytes; kubelet's are "csi-" + 64 hex.
constexpr std::size_t kVolumeIdLimit = 256;

core::Error Invalid(std::string message) {
  return core::Error(core::ErrorCode::kInvalidArgument, std::move(message), false);
}

core::Status CheckVolumeId(const std::string& volume_id) {
  if (volume_id.empty()) return std::unexpected(Invalid("volume_id is required"));
  if (volume_id.size() > kVolumeIdLimit) {
    return std::unexpected(
        Invalid(fmt::format("volume_id is longer than {} bytes", kVolumeIdLimit)));
  }
  return core::Ok();
}

std::string ContextValue(const google::protobuf::Map<std::string, std::string>& context,
                         std::string_view key) {
  const auto found = context.find(std::string(key));
  return found == context.end() ? std::string() : found->second;
}

}  // namespace

core::Result<PublishRequest> ParsePublishRequest(const csi::v1::NodePublishVolumeRequest& request) {
  if (auto id = CheckVolumeId(request.volume_id()); !id) return std::unexpected(id.error());
  if (request.target_path().empty()) return std::unexpected(Invalid("target_path is required"));
  if (!request.has_volume_capability()) {
    return std::unexpected(Invalid("volume_capability is required"));
  }
  const csi::v1::VolumeCapability& capability = request.volume_capability();
  if (capability.has_block()) {
    return std::unexpected(Invalid(
        "block access is not supported: a revision is a folder of files (use a mount volume)"));
  }
  if (!capability.has_mount()) {
    return std::unexpected(Invalid("volume_capability needs the mount access type"));
  }
  const auto mode = capability.access_mode().mode();
  if (!capability.has_access_mode() || mode == csi::v1::VolumeCapability::AccessMode::UNKNOWN ||
      !csi::v1::VolumeCapability::AccessMode::Mode_IsValid(mode)) {
    return std::unexpected(Invalid("volume_capability needs a known access mode"));
  }

  const auto& context = request.volume_context();
  PublishRequest parsed{.volume_id = request.volume_id(),
                        .target_path = request.target_path(),
                        .pod_namespace = ContextValue(context, kPodNamespaceAttribute),
                        .pod_name = ContextValue(context, kPodNameAttribute),
                        .pod_uid = ContextValue(context, kPodUidAttribute)};
  if (ContextValue(context, kEphemeralAttribute) != "true") {
    return std::unexpected(Invalid(fmt::format(
        "{} serves ephemeral inline volumes only ({} is not \"true\"; the CSIDriver object needs "
        "podInfoOnMount: true)",
        kCsiPluginName, kEphemeralAttribute)));
  }
  if (!core::api::IsObjectName(parsed.pod_namespace) || parsed.pod_name.empty()) {
    return std::unexpected(Invalid(fmt::format(
        "the volume context lacks kubelet's pod info ({} and {}; the CSIDriver object needs "
        "podInfoOnMount: true)",
        kPodNamespaceAttribute, kPodNameAttribute)));
  }
  const std::string revision = ContextValue(context, kRevisionVolumeAttribute);
  if (revision.empty()) {
    return std::unexpected(
        Invalid(fmt::format("the volume attribute {} (the ModelRevision to mount) is required",
                            kRevisionVolumeAttribute)));
  }
  auto reference = core::api::ParseRevisionAnnotation(revision, parsed.pod_namespace);
  if (!reference) return std::unexpected(Invalid(reference.error().message()));
  parsed.revision_name = std::move(reference->name);
  return parsed;
}

core::Result<UnpublishRequest> ParseUnpublishRequest(
    const csi::v1::NodeUnpublishVolumeRequest& request) {
  if (auto id = CheckVolumeId(request.volume_id()); !id) return std::unexpected(id.error());
  if (request.target_path().empty()) return std::unexpected(Invalid("target_path is required"));
  return UnpublishRequest{.volume_id = request.volume_id(), .target_path = request.target_path()};
}

}  // namespace modelplane::agent
