#include "core/runtime/runtime_config.h"

namespace modelplane::core {

void BindConfig(ConfigMap& map, AdminConfig& config) {
  map.Optional("address", config.address);
  map.Optional("port", config.port);
}

void BindConfig(ConfigMap& map, LogConfig& config) {
  map.Optional("level", config.level, OneOf({"", "trace", "debug", "info", "warn", "error"}));
  map.Optional("format", config.format, OneOf({"keyvalue", "json"}));
}

void BindConfig(ConfigMap& map, KubernetesConfig& config) {
  map.Optional("kubeconfig", config.kubeconfig);
  map.Optional("context", config.context);
  map.Optional("qps", config.qps, InRange(0.1, 10'000.0));
  map.Optional("burst", config.burst, InRange(1, 100'000));
}

}  // namespace modelplane::core
