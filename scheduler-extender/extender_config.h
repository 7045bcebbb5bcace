// modelplane-scheduler-extender's configuration file.
#pragma once

#include "core/config/config_map.h"
#include "core/runtime/runtime_config.h"

namespace modelplane::extender {

struct ExtenderConfig {
  core::AdminConfig admin;
  core::LogConfig log;
  core::KubernetesConfig kubernetes;
};

void BindConfig(core::ConfigMap& map, ExtenderConfig& config);

}  // namespace modelplane::extender
