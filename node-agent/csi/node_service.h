// The CSI Node service of csi.modelplane.io: NodeGetInfo (node_id = the node's name),
// NodeGetCapabilities (none: no staging, no volume stats, no expansion), and NodePublishVolume /
// NodeUnpublishVolume, parsed by csi_requests.h and carried out by VolumePublisher. Every other
// Node call answers UNIMPLEMENTED (the generated base class).
// Thread safety: gRPC calls from any thread; the publisher serialises mounts.
#pragma once

#include <string>

#include "core/log/logger.h"
#include "csi.grpc.pb.h"
#include "node-agent/csi/volume_publisher.h"

namespace modelplane::agent {

class NodeService final : public csi::v1::Node::Service {
 public:
  NodeService(std::string node_id, VolumePublisher& publisher, const core::Logger& logger)
      : node_id_(std::move(node_id)),
        publisher_(publisher),
        logger_(logger.WithComponent("node-agent.csi")) {}

  grpc::Status NodeGetInfo(grpc::ServerContext* context, const csi::v1::NodeGetInfoRequest* request,
                           csi::v1::NodeGetInfoResponse* response) override;
  grpc::Status NodeGetCapabilities(grpc::ServerContext* context,
                                   const csi::v1::NodeGetCapabilitiesRequest* request,
                                   csi::v1::NodeGetCapabilitiesResponse* response) override;
  grpc::Status NodePublishVolume(grpc::ServerContext* context,
                                 const csi::v1::NodePublishVolumeRequest* request,
                                 csi::v1::NodePublishVolumeResponse* response) override;
  grpc::Status NodeUnpublishVolume(grpc::ServerContext* context,
                                   const csi::v1::NodeUnpublishVolumeRequest* request,
                                   csi::v1::NodeUnpublishVolumeResponse* response) override;

 private:
  grpc::Status Refused(std::string_view call, const std::string& volume_id,
                       const core::Error& error) const;

  const std::string node_id_;
  VolumePublisher& publisher_;
  const core::Logger logger_;
};

}  // namespace modelplane::agent
