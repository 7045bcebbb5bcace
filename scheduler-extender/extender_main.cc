// modelplane-scheduler-extender: kube-scheduler HTTP extender scoring nodes by cached weights.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "core/runtime/component_main.h"
#include "scheduler-extender/extender_app.h"

namespace {

using modelplane::extender::ExtenderConfig;

// Flags for what a Deployment most often sets per environment; the rest is in --config.
struct ExtenderFlags {
  std::optional<std::uint16_t> port;
  std::optional<std::string> address;
  std::optional<std::string> path_prefix;
  std::optional<std::string> filter_verb;
  std::optional<std::string> prioritize_verb;
  std::optional<std::string> kubeconfig;

  modelplane::core::ComponentFlags<ExtenderConfig> Bind() {
    return {.add =
                [this](CLI::App& app) {
                  app.add_option("--port", port, "port of the filter and prioritize verbs");
                  app.add_option("--address", address, "address the verbs listen on");
                  app.add_option("--path-prefix", path_prefix,
                                 "path before the verbs (the urlPrefix's path), e.g. /scheduler");
                  app.add_option("--filter-verb", filter_verb, "filter verb (default filter)");
                  app.add_option("--prioritize-verb", prioritize_verb,
                                 "prioritize verb (default prioritize)");
                  app.add_option("--kubeconfig", kubeconfig,
                                 "kubeconfig file (default: in-cluster service account)");
                },
            .apply =
                [this](ExtenderConfig& config) {
                  if (port) config.server.port = *port;
                  if (address) config.server.address = *address;
                  if (path_prefix) config.server.path_prefix = *path_prefix;
                  if (filter_verb) config.server.filter_verb = *filter_verb;
                  if (prioritize_verb) config.server.prioritize_verb = *prioritize_verb;
                  if (kubeconfig) config.kubernetes.kubeconfig = *kubeconfig;
                }};
  }
};

}  // namespace

int main(int argc, char** argv) {
  // Errors come back as values; this catches what a library throws (CLI11 building the
  // command line, an allocation), so that it is reported instead of ending in std::terminate.
  try {
    ExtenderFlags flags;
    return modelplane::core::RunComponentMain<ExtenderConfig>(
        argc, argv, "scheduler-extender",
        "modelplane scheduler extender: places pods where their model weights are",
        modelplane::extender::RunExtender, flags.Bind());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "modelplane-scheduler-extender: %s\n", error.what());
    return 1;
  }
}
