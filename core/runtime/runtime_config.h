// Configuration sections every modelplane binary shares: its admin endpoint (/metrics,
// /healthz, /readyz), its logging, and how it reaches the Kubernetes API server.
//
// Each binary's config struct embeds these and binds them under the same keys, so the three
// config files read alike. Thread safety: plain values.
#pragma once

#include <cstdint>
#include <string>

#include "core/config/config_map.h"

namespace modelplane::core {

struct AdminConfig {
  std::string address = "127.0.0.1";
  std::uint16_t port = 9090;  // 0 lets the kernel pick (tests)
};

struct LogConfig {
  // trace|debug|info|warn|error; empty: MODELPLANE_LOG_LEVEL, else info. A level set here or
  // by flag wins over the environment.
  std::string level;
  std::string format = "keyvalue";  // keyvalue|json
};

struct KubernetesConfig {
  std::string kubeconfig;  // empty: in-cluster service account
  std::string context;     // empty: the kubeconfig's current context
  double qps = 50;
  int burst = 100;
};

void BindConfig(ConfigMap& map, AdminConfig& config);
void BindConfig(ConfigMap& map, LogConfig& config);
void BindConfig(ConfigMap& map, KubernetesConfig& config);

}  // namespace modelplane::core
