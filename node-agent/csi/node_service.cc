#include "node-agent/csi/node_service.h"

#include "node-agent/csi/csi_requests.h"
#include "node-agent/csi/grpc_status.h"

namespace modelplane::agent {

grpc::Status NodeService::Refused(std::string_view call, const std::string& volume_id,
                                  const core::Error& error) const {
  logger_.Warn("csi_call_failed",
               {{"call", call}, {"volume", volume_id}, {"error", error.ToString()}});
  return ToGrpcStatus(error);
}

grpc::Status NodeService::NodeGetInfo(grpc::ServerContext* /*context*/,
                                      const csi::v1::NodeGetInfoRequest* /*request*/,
                                      csi::v1::NodeGetInfoResponse* response) {
  response->set_node_id(node_id_);
  // 0: no limit; views are bind mounts, not attached devices.
  response->set_max_volumes_per_node(0);
  return grpc::Status::OK;
}

grpc::Status NodeService::NodeGetCapabilities(
    grpc::ServerContext* /*context*/, const csi::v1::NodeGetCapabilitiesRequest* /*request*/,
    csi::v1::NodeGetCapabilitiesResponse* /*response*/) {
  // None: publish and unpublish need no capability, and nothing else is implemented.
  return grpc::Status::OK;
}

grpc::Status NodeService::NodePublishVolume(grpc::ServerContext* /*context*/,
                                            const csi::v1::NodePublishVolumeRequest* request,
                                            csi::v1::NodePublishVolumeResponse* /*response*/) {
  auto parsed = ParsePublishRequest(*request);
  if (!parsed) return Refused("NodePublishVolume", request->volume_id(), parsed.error());
  if (auto published = publisher_.Publish(*parsed); !published) {
    return Refused("NodePublishVolume", request->volume_id(), published.error());
  }
  return grpc::Status::OK;
}

grpc::Status NodeService::NodeUnpublishVolume(grpc::ServerContext* /*context*/,
                                              const csi::v1::NodeUnpublishVolumeRequest* request,
                                              csi::v1::NodeUnpublishVolumeResponse* /*response*/) {
  auto parsed = ParseUnpublishRequest(*request);
  if (!parsed) return Refused("NodeUnpublishVolume", request->volume_id(), parsed.error());
  if (auto unpublished = publisher_.Unpublish(*parsed); !unpublished) {
    return Refused("NodeUnpublishVolume", request->volume_id(), unpublished.error());
  }
  return grpc::Status::OK;
}

}  // namespace modelplane::agent
