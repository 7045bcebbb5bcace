// Connects a binary to the Kubernetes API server from its KubernetesConfig: a kubeconfig file
// when one is named, the pod's service account otherwise. It asks the server for /version, so a
// returned connection has been answered at least once (wrong CA, credentials or address fail
// here, at start-up, with a clear error).
#pragma once

#include <memory>

#include "core/clock/clock.h"
#include "core/kube/kube_client.h"
#include "core/kube/watch_stream.h"
#include "core/runtime/runtime_config.h"

namespace modelplane::core {

struct KubeConnection {
  KubeConfig config;
  std::string server_version;  // gitVersion from /version, proof the server answered
  std::unique_ptr<KubeClient> client;
  std::unique_ptr<Watcher> watcher;
};

[[nodiscard]] Result<KubeConnection> ConnectToKubernetes(const KubernetesConfig& settings,
                                                         const Clock& clock);

}  // namespace modelplane::core
