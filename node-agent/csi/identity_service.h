// The CSI Identity service of csi.modelplane.io: its name and version, no plugin capabilities
// (a node-only plugin: no controller service, no topology), and Probe, which says ready once
// the plugin's view of the cluster is complete (the resolver's informers synced; the store is
// open before the plugin exists).
// Thread safety: gRPC calls from any thread.
#pragma once

#include <functional>
#include <string>

#include "csi.grpc.pb.h"

namespace modelplane::agent {

class IdentityService final : public csi::v1::Identity::Service {
 public:
  IdentityService(std::string version, std::function<bool()> ready)
      : version_(std::move(version)), ready_(std::move(ready)) {}

  grpc::Status GetPluginInfo(grpc::ServerContext* context,
                             const csi::v1::GetPluginInfoRequest* request,
                             csi::v1::GetPluginInfoResponse* response) override;
  grpc::Status GetPluginCapabilities(grpc::ServerContext* context,
                                     const csi::v1::GetPluginCapabilitiesRequest* request,
                                     csi::v1::GetPluginCapabilitiesResponse* response) override;
  grpc::Status Probe(grpc::ServerContext* context, const csi::v1::ProbeRequest* request,
                     csi::v1::ProbeResponse* response) override;

 private:
  const std::string version_;
  const std::function<bool()> ready_;
};

}  // namespace modelplane::agent
