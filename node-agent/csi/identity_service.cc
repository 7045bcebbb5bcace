#include "node-agent/csi/identity_service.h"

#include "node-agent/csi/csi_requests.h"

namespace modelplane::agent {

grpc::Status IdentityService::GetPluginInfo(grpc::ServerContext* /*context*/,
                                            const csi::v1::GetPluginInfoRequest* /*request*/,
                                            csi::v1::GetPluginInfoResponse* response) {
  response->set_name(std::string(kCsiPluginName));
  response->set_vendor_version(version_);
  return grpc::Status::OK;
}

grpc::Status IdentityService::GetPluginCapabilities(
    grpc::ServerContext* /*context*/, const csi::v1::GetPluginCapabilitiesRequest* /*request*/,
    csi::v1::GetPluginCapabilitiesResponse* /*response*/) {
  // None: no CONTROLLER_SERVICE (ephemeral volumes are never created or attached), no
  // VOLUME_ACCESSIBILITY_CONSTRAINTS (placement is the scheduler extender's job).
  return grpc::Status::OK;
}

grpc::Status IdentityService::Probe(grpc::ServerContext* /*context*/,
                                    const csi::v1::ProbeRequest* /*request*/,
                                    csi::v1::ProbeResponse* response) {
  response->mutable_ready()->set_value(ready_());
  return grpc::Status::OK;
}

}  // namespace modelplane::agent
