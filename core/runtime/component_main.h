// The shared shape of every binary's main(): flags, config file, runtime, run, exit code.
//
//   int main(int argc, char** argv) {
//     return RunComponentMain<OperatorConfig>(argc, argv, "operator", "...", RunOperator);
//   }
//
// Config must bind from YAML (BindConfig) and have `admin` and `log` members. Flags override
// the file: --log-level, --admin-port. A bad flag or config prints one clear error, exit 2. A
// binary told to stop exits 0, even when the stop cut its start-up short.
// A binary may add flags of its own with ComponentFlags.
#pragma once

#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/config/config_loader.h"
#include "core/runtime/component_runtime.h"

namespace modelplane::core {

inline constexpr const char* kModelplaneVersion = "0.1.0";

// A binary's own flags: `add` declares them on the app (bound to variables the caller owns),
// `apply` writes the ones given over the loaded config file, so flags win as for the shared ones.
template <typename Config>
struct ComponentFlags {
  std::function<void(CLI::App&)> add;
  std::function<void(Config&)> apply;
};

template <ConfigStruct Config>
int RunComponentMain(int argc, char** argv, const std::string& component,
                     const std::string& description,
                     const std::function<int(const Config&, ComponentRuntime&)>& run,
                     const ComponentFlags<Config>& flags = {}) {
  CLI::App app{description, "modelplane-" + component};
  std::string config_path;
  std::string log_level;
  std::optional<std::uint16_t> admin_port;
  app.add_option("--config", config_path, "YAML configuration file")->check(CLI::ExistingFile);
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error (overrides the file)");
  app.add_option("--admin-port", admin_port, "port of /metrics, /healthz, /readyz");
  app.set_version_flag("--version", kModelplaneVersion);
  if (flags.add) flags.add(app);
  CLI11_PARSE(app, argc, argv);

  Config config{};
  if (!config_path.empty()) {
    auto loaded = LoadConfigFile<Config>(config_path);
    if (!loaded) {
      std::fprintf(stderr, "modelplane-%s: %s\n", component.c_str(),
                   loaded.error().message().c_str());
      return 2;
    }
    config = std::move(*loaded);
  }
  if (!log_level.empty()) config.log.level = log_level;
  if (admin_port) config.admin.port = *admin_port;
  if (flags.apply) flags.apply(config);

  auto runtime =
      ComponentRuntime::Create({.component = component, .admin = config.admin, .log = config.log});
  if (!runtime) {
    std::fprintf(stderr, "modelplane-%s: %s\n", component.c_str(),
                 runtime.error().ToString().c_str());
    return 2;
  }
  (*runtime)->logger().Info("started", {{"version", kModelplaneVersion}});
  int code = run(config, **runtime);
  if (code != 0 && (*runtime)->shutdown().cancelled()) {
    // Told to stop (SIGTERM) before it was up: what failed then failed because of the stop (a
    // request cancelled, a wait cut short), and a stop that was asked for is a clean exit.
    (*runtime)->logger().Info("stopped_while_starting",
                              {{"exit_code", static_cast<std::int64_t>(code)}});
    code = 0;
  }
  (*runtime)->Stop();
  return code;
}

}  // namespace modelplane::core
