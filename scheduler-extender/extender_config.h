// modelplane-scheduler-extender's configuration file and flags.
//
//   server: {address: "", port: 8888, pathPrefix: /scheduler,
//            filterVerb: filter, prioritizeVerb: prioritize, bodyLimit: 1Mi,
//            maxNodes: 5000, maxConcurrentBodies: 8,
//            tls: {certFile: ..., keyFile: ..., clientCAFile: ..., clientNames: [...]}}
//
// The verbs are served at <pathPrefix>/<verb>, matching a KubeSchedulerConfiguration extender
// with urlPrefix http(s)://<service>:<port><pathPrefix> and the same filterVerb/prioritizeVerb.
// An empty address means the pod's own (POD_IP, from the downward API): the verbs are then not
// reachable on other interfaces of the pod, loopback included.
// Thread safety: plain values.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config/byte_size.h"
#include "core/config/config_map.h"
#include "core/runtime/runtime_config.h"

namespace modelplane::extender {

// HTTPS for the verbs; with clientCAFile, mutual TLS: kube-scheduler must present a certificate
// signed by that CA (its extender entry's tlsConfig.certFile/keyFile).
struct ExtenderTlsConfig {
  std::string certificate_file;  // PEM chain; empty: plain HTTP
  std::string private_key_file;  // PEM
  std::string client_ca_file;    // empty: no client certificate asked for
  // With clientCAFile: the client certificate's CN must be one of these (403 otherwise); empty
  // accepts any certificate the CA signed.
  std::vector<std::string> client_names;

  [[nodiscard]] bool Enabled() const { return !certificate_file.empty(); }
  [[nodiscard]] bool MutualTls() const { return Enabled() && !client_ca_file.empty(); }
};

struct ExtenderServerConfig {
  // Empty: POD_IP from the environment (the chart sets it from the downward API).
  std::string address;
  std::uint16_t port = 8888;  // 0 lets the kernel pick (tests)
  std::string path_prefix = "/scheduler";
  std::string filter_verb = "filter";
  std::string prioritize_verb = "prioritize";
  // A names-only request (nodeCacheCapable: true) for 5000 nodes is about 100 KB. A node-list
  // request carries every candidate Node object, ~1-10 KiB each: raise this to what
  // maxNodes of them need (docs/scheduler-extender.md).
  core::ByteSize body_limit{1024ULL * 1024};
  // Candidates one request may name (NodeNames or Nodes.items).
  std::size_t max_nodes = 5000;
  // Requests whose bodies are read or handled at once; beyond it 503 before the body is read.
  std::size_t max_concurrent_bodies = 8;
  int threads = 4;
  // kube-scheduler's own httpTimeout defaults to 5 s; a request still unread after this is dead.
  std::chrono::milliseconds body_timeout{10'000};
  ExtenderTlsConfig tls;

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

// The address to listen on: `address`, or when empty `pod_ip` (POD_IP); fails when both are.
[[nodiscard]] core::Result<std::string> ListenAddress(const ExtenderServerConfig& config,
                                                      const std::optional<std::string>& pod_ip);

void BindConfig(core::ConfigMap& map, ExtenderTlsConfig& config);
void BindConfig(core::ConfigMap& map, ExtenderServerConfig& config);
void BindConfig(core::ConfigMap& map, ExtenderConfig& config);

}  // namespace modelplane::extender
