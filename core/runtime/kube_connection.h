// Connects a binary to the Kubernetes API server from its KubernetesConfig: a kubeconfig file
// when one is named, the pod's service account otherwise. It asks the server for /version, so a
// returned connection has been answered at least once (wrong CA, credentials or address fail
// here, at start-up, with a clear error).
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/kube/kube_client.h"
#include "core/kube/watch_stream.h"
#include "core/log/logger.h"
#include "core/runtime/runtime_config.h"

namespace modelplane::core {

struct KubeConnection {
  KubeConfig config;
  std::string server_version;  // gitVersion from /version, proof the server answered
  std::unique_ptr<KubeClient> client;
  std::unique_ptr<Watcher> watcher;
  CancellationToken* stop = nullptr;  // the component's shutdown, which its clients obey
};

// `stop` (the component's shutdown, may be null) ends the client's waits and requests at once,
// the /version probe's included: a binary told to stop while the API server throttles it exits
// instead of waiting out Retry-After.
[[nodiscard]] Result<KubeConnection> ConnectToKubernetes(const KubernetesConfig& settings,
                                                         const Clock& clock,
                                                         CancellationToken* stop);

// A client of its own for leader election, as controller-runtime gives it one: its own token
// bucket and connections, so that a burst of the controllers' requests never queues a lease
// renewal behind it, and a request timeout of the renew deadline, so that a renewal stuck on a
// dead connection ends when leading would end anyway instead of holding up the step-down.
[[nodiscard]] Result<std::unique_ptr<KubeClient>> LeaderElectionClient(
    const KubeConnection& connection, std::chrono::milliseconds renew_deadline,
    std::chrono::milliseconds retry_period, const Clock& clock);

// ConnectToKubernetes for a binary's start-up: logs api_server_connected,
// kubernetes_connection_failed, or kubernetes_connection_stopped when `stop` ended the attempt,
// so every binary reports the same events. A binary exits 0 after the last: it was told to.
[[nodiscard]] std::optional<KubeConnection> ConnectAndLog(const KubernetesConfig& settings,
                                                          const Clock& clock,
                                                          CancellationToken* stop,
                                                          const Logger& logger);

}  // namespace modelplane::core
