#include "core/runtime/kube_connection.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace modelplane::core {

Result<KubeConnection> ConnectToKubernetes(const KubernetesConfig& settings, const Clock& clock,
                                           CancellationToken* stop) {
  auto config = settings.kubeconfig.empty()
                    ? LoadInClusterConfig(ProcessEnvironment, clock)
                    : LoadKubeconfigFile(settings.kubeconfig, settings.context);
  if (!config) return std::unexpected(config.error().Wrap("loading Kubernetes credentials"));
  KubeClientOptions options;
  options.qps = settings.qps;
  options.burst = settings.burst;
  options.stop = stop;
  auto client = KubeClient::Create(*config, options, clock);
  if (!client) return std::unexpected(client.error());
  auto watcher = Watcher::Create(*config);
  if (!watcher) return std::unexpected(watcher.error());
  auto version = (*client)->Request("GET", "/version", nullptr, "");
  if (!version) return std::unexpected(version.error().Wrap("asking the API server its version"));
  std::string server_version;
  if (version->contains("gitVersion") && (*version)["gitVersion"].is_string()) {
    server_version = (*version)["gitVersion"].get<std::string>();
  }
  return KubeConnection{std::move(*config), std::move(server_version), std::move(*client),
                        std::move(*watcher), stop};
}

Result<std::unique_ptr<KubeClient>> LeaderElectionClient(const KubeConnection& connection,
                                                         std::chrono::milliseconds renew_deadline,
                                                         std::chrono::milliseconds retry_period,
                                                         const Clock& clock) {
  KubeClientOptions options;
  // An attempt is at most three requests per retry period (a renewal that conflicts, a read, a
  // write); four per period, and never below client-go's default of 5 qps, leaves room for a
  // release and a campaign's create.
  const double attempts_per_second =
      1000.0 / static_cast<double>(std::max<std::int64_t>(1, retry_period.count()));
  options.qps = std::max(5.0, 4 * attempts_per_second);
  options.burst = static_cast<int>(std::ceil(2 * options.qps));
  options.request_timeout =
      std::max(std::chrono::seconds(1), std::chrono::ceil<std::chrono::seconds>(renew_deadline));
  options.user_agent = "modelplane/leader-election";
  options.stop = connection.stop;
  return KubeClient::Create(connection.config, options, clock);
}

std::optional<KubeConnection> ConnectAndLog(const KubernetesConfig& settings, const Clock& clock,
                                            CancellationToken* stop, const Logger& logger) {
  auto connection = ConnectToKubernetes(settings, clock, stop);
  if (!connection && stop != nullptr && stop->cancelled()) {
    logger.Info("kubernetes_connection_stopped", {{"error", connection.error().ToString()}});
    return std::nullopt;
  }
  if (!connection) {
    logger.Error("kubernetes_connection_failed", {{"error", connection.error().ToString()}});
    return std::nullopt;
  }
  logger.Info("api_server_connected",
              {{"server", connection->config.server}, {"version", connection->server_version}});
  return std::move(*connection);
}

}  // namespace modelplane::core
