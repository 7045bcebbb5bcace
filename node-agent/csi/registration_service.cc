#include "node-agent/csi/registration_service.h"

#include "node-agent/csi/csi_requests.h"

namespace modelplane::agent {
namespace {

// The plugin type kubelet's CSI handler takes (k8s.io/kubelet pluginregistration constants).
constexpr const char* kCsiPluginType = "CSIPlugin";
// The CSI versions kubelet accepts from a plugin; the spec this plugin speaks is 1.x.
constexpr const char* kCsiVersion = "1.0.0";

}  // namespace

grpc::Status RegistrationService::GetInfo(grpc::ServerContext* /*context*/,
                                          const pluginregistration::InfoRequest* /*request*/,
                                          pluginregistration::PluginInfo* response) {
  response->set_type(kCsiPluginType);
  response->set_name(std::string(kCsiPluginName));
  response->set_endpoint(csi_socket_.string());
  response->add_supported_versions(kCsiVersion);
  return grpc::Status::OK;
}

grpc::Status RegistrationService::NotifyRegistrationStatus(
    grpc::ServerContext* /*context*/, const pluginregistration::RegistrationStatus* request,
    pluginregistration::RegistrationStatusResponse* /*response*/) {
  registered_.store(request->plugin_registered(), std::memory_order_release);
  if (request->plugin_registered()) {
    logger_.Info("csi_plugin_registered_with_kubelet", {{"endpoint", csi_socket_.string()}});
  } else {
    // kubelet tries again when the socket is made anew (the agent's next start).
    logger_.Error("csi_plugin_registration_refused_by_kubelet",
                  {{"endpoint", csi_socket_.string()}, {"error", request->error()}});
  }
  return grpc::Status::OK;
}

}  // namespace modelplane::agent
