// The CSI node plugin csi.modelplane.io as one piece: the volume publisher (leases recovered
// from their records and the mount table), the Identity and Node services, and their gRPC
// server on a unix socket; with a registration socket, kubelet's plugin registration service
// on it too (registration_service.h), made only once the CSI socket listens. The daemon
// (agent_app.cc) starts it when `csi.enabled` is set; tests start it against a real store with a
// table resolver.
//
// Eviction asks InUseDigests() (the revisions some pod on this node has mounted) and claims a
// view through view_guard() before it removes a revision.
//
// Thread safety: Start and Stop from the owning thread; queries from any thread.
#pragma once

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/log/logger.h"
#include "node-agent/csi/csi_server.h"
#include "node-agent/csi/identity_service.h"
#include "node-agent/csi/mounter.h"
#include "node-agent/csi/node_service.h"
#include "node-agent/csi/registration_service.h"
#include "node-agent/csi/revision_resolver.h"
#include "node-agent/csi/volume_publisher.h"
#include "node-agent/store/store_layout.h"

namespace modelplane::agent {

struct CsiPluginOptions {
  std::string node_id;  // the node's name: NodeGetInfo, and what the CO schedules by
  std::string version;  // GetPluginInfo's vendor_version
  std::filesystem::path socket_path;
  // Empty: something else registers the plugin with kubelet (node-driver-registrar).
  std::filesystem::path registration_socket_path;
  std::filesystem::path target_root;  // targets must lie below it (kubelet's folder)
  int max_threads = 16;
};

class CsiPlugin {
 public:
  struct Dependencies {
    const StoreLayout& layout;  // of an open store: views to mount, lease records
    const RevisionResolver& resolver;
    Mounter& mounter;
    const core::Logger& logger;
    const core::Clock& clock;
  };

  [[nodiscard]] static core::Result<std::unique_ptr<CsiPlugin>> Start(Dependencies dependencies,
                                                                      CsiPluginOptions options);
  CsiPlugin(const CsiPlugin&) = delete;
  CsiPlugin& operator=(const CsiPlugin&) = delete;
  ~CsiPlugin();  // Stop()

  // Stops serving, waiting for calls in flight: the registration socket goes first (kubelet
  // deregisters the driver and retries unpublishing until the next start registers it again).
  // Leases and mounts stay: pods keep reading, and the next start rebuilds the leases.
  void Stop();

  // What eviction claims a revision's view through (view_guard.h).
  [[nodiscard]] ViewGuard& view_guard() { return *publisher_; }
  [[nodiscard]] std::set<core::Sha256Bytes> InUseDigests() const {
    return publisher_->InUseDigests();
  }
  [[nodiscard]] std::vector<VolumeLease> Leases() const { return publisher_->Leases(); }
  [[nodiscard]] const LeaseRecoveryReport& recovery() const { return publisher_->recovery(); }
  [[nodiscard]] const std::filesystem::path& socket_path() const { return server_->socket_path(); }
  // Whether kubelet said it registered the plugin (false without a registration socket).
  [[nodiscard]] bool registered_with_kubelet() const { return registration_.registered(); }

 private:
  CsiPlugin(Dependencies dependencies, CsiPluginOptions options,
            std::unique_ptr<VolumePublisher> publisher);

  const CsiPluginOptions options_;
  std::unique_ptr<VolumePublisher> publisher_;
  IdentityService identity_;
  NodeService node_;
  RegistrationService registration_;
  std::unique_ptr<CsiServer> server_;
  std::unique_ptr<CsiServer> registration_server_;
};

}  // namespace modelplane::agent
