// modelplane-scheduler-extender's configuration file and flags.
//
//   server: {address: 0.0.0.0, port: 8888, pathPrefix: /scheduler,
//            filterVerb: filter, prioritizeVerb: prioritize, bodyLimit: 64Mi}
//
// The verbs are served at <pathPrefix>/<verb>, matching a KubeSchedulerConfiguration extender
// with urlPrefix http://<service>:<port><pathPrefix> and the same filterVerb/prioritizeVerb.
// Thread safety: plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/config/byte_size.h"
#include "core/config/config_map.h"
#include "core/runtime/runtime_config.h"

namespace modelplane::extender {

struct ExtenderServerConfig {
  std::string address = "0.0.0.0";
  std::uint16_t port = 8888;  // 0 lets the kernel pick (tests)
  std::string path_prefix = "/scheduler";
  std::string filter_verb = "filter";
  std::string prioritize_verb = "prioritize";
  // A full-node request carries every candidate Node object; 5000 nodes of ~10 KiB fit.
  core::ByteSize body_limit{64ULL * 1024 * 1024};
  int threads = 4;
  // kube-scheduler's own httpTimeout defaults to 5 s; a request still unread after this is dead.
  std::chrono::milliseconds body_timeout{10'000};

  [[nodiscard]] std::string FilterPath() const;
  [[nodiscard]] std::string PrioritizePath() const;
};

struct ExtenderConfig {
  core::AdminConfig admin;
  core::LogConfig log;
  core::KubernetesConfig kubernetes;
  ExtenderServerConfig server;
};

// The checks BindConfig applies, for values that came from flags instead of the file.
[[nodiscard]] core::Status ValidateServerConfig(const ExtenderServerConfig& config);

void BindConfig(core::ConfigMap& map, ExtenderServerConfig& config);
void BindConfig(core::ConfigMap& map, ExtenderConfig& config);

}  // namespace modelplane::extender
