// modelplane-operator: reconciles ModelRevision and ModelCache objects.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "core/config/duration.h"
#include "core/runtime/component_main.h"
#include "operator/operator_app.h"

namespace {

using modelplane::controller::OperatorConfig;

// Flags for what is most often set per environment; everything else is in --config.
struct OperatorFlags {
  std::optional<std::string> kubeconfig;
  std::optional<std::string> watch_namespace;
  std::optional<std::string> resync_period;
  std::optional<int> revision_workers;
  std::optional<bool> leader_elect;
  std::optional<std::string> lease_namespace;

  modelplane::core::ComponentFlags<OperatorConfig> Bind() {
    return {
        .add =
            [this](CLI::App& app) {
              app.add_option("--kubeconfig", kubeconfig,
                             "kubeconfig file (default: in-cluster service account)");
              app.add_option("--namespace", watch_namespace,
                             "watch ModelRevisions in this namespace only (default: all)");
              app.add_option("--resync-period", resync_period,
                             "re-check every object this often, e.g. 5m (0s: never)")
                  ->check([](const std::string& text) -> std::string {
                    auto parsed = modelplane::core::ParseDuration(text);
                    if (!parsed) return parsed.error().message();
                    if (*parsed % std::chrono::seconds(1) != std::chrono::nanoseconds(0)) {
                      return "must be whole seconds";
                    }
                    if (*parsed > std::chrono::hours(24)) return "must be at most 24h";
                    return "";
                  });
              app.add_option("--workers", revision_workers, "ModelRevision reconciles in parallel")
                  ->check(CLI::Range(1, 64));
              app.add_option("--leader-elect", leader_elect,
                             "campaign for the Lease before reconciling (true|false)");
              app.add_option("--lease-namespace", lease_namespace,
                             "namespace of the leader election Lease");
            },
        .apply =
            [this](OperatorConfig& config) {
              if (kubeconfig) config.kubernetes.kubeconfig = *kubeconfig;
              if (watch_namespace) config.controllers.namespace_name = *watch_namespace;
              if (resync_period) {
                config.controllers.resync_period = std::chrono::duration_cast<std::chrono::seconds>(
                    *modelplane::core::ParseDuration(*resync_period));
              }
              if (revision_workers) config.controllers.revision_workers = *revision_workers;
              if (leader_elect) config.leader_election.enabled = *leader_elect;
              if (lease_namespace) config.leader_election.namespace_name = *lease_namespace;
            }};
  }
};

}  // namespace

int main(int argc, char** argv) {
  // Errors come back as values; this catches what a library throws (CLI11 building the
  // command line, an allocation), so that it is reported instead of ending in std::terminate.
  try {
    OperatorFlags flags;
    return modelplane::core::RunComponentMain<OperatorConfig>(
        argc, argv, "operator", "modelplane operator: plans, stages and admits model revisions",
        modelplane::controller::RunOperator, flags.Bind());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "modelplane-operator: %s\n", error.what());
    return 1;
  }
}
