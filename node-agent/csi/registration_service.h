// kubelet's plugin registration API (pluginregistration/v1) for csi.modelplane.io: the agent
// registers its CSI socket with kubelet's plugin watcher itself, as node-driver-registrar would
// from a sidecar. kubelet finds the registration socket in its plugins_registry folder, asks
// GetInfo (a CSI plugin, its name, the CSI socket to dial, the versions it speaks), registers the
// driver (it calls NodeGetInfo on that socket and records the node in the CSINode object), and
// reports the outcome through NotifyRegistrationStatus.
// Thread safety: gRPC calls from any thread; registered() from any thread.
#pragma once

#include <atomic>
#include <filesystem>

#include "core/log/logger.h"
#include "pluginregistration/v1/api.grpc.pb.h"

namespace modelplane::agent {

class RegistrationService final : public pluginregistration::Registration::Service {
 public:
  // csi_socket: the path kubelet dials for the CSI services, as kubelet sees it (the agent
  // mounts kubelet's plugin folder at the same path).
  RegistrationService(std::filesystem::path csi_socket, const core::Logger& logger)
      : csi_socket_(std::move(csi_socket)), logger_(logger) {}

  grpc::Status GetInfo(grpc::ServerContext* context, const pluginregistration::InfoRequest* request,
                       pluginregistration::PluginInfo* response) override;
  grpc::Status NotifyRegistrationStatus(
      grpc::ServerContext* context, const pluginregistration::RegistrationStatus* request,
      pluginregistration::RegistrationStatusResponse* response) override;

  // Whether kubelet's last word was a successful registration.
  [[nodiscard]] bool registered() const { return registered_.load(std::memory_order_acquire); }

 private:
  const std::filesystem::path csi_socket_;
  const core::Logger logger_;
  std::atomic<bool> registered_{false};
};

}  // namespace modelplane::agent
