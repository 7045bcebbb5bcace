// modelplane-operator's configuration file (see charts/modelplane for the deployed one).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/config/config_map.h"
#include "core/policy/source_policy.h"
#include "core/runtime/runtime_config.h"
#include "operator/admission/admission_options.h"

namespace modelplane::controller {

struct LeaderElectionConfig {
  bool enabled = true;
  std::string namespace_name = "modelplane-system";
  std::string lease_name = "modelplane-operator";
  std::chrono::milliseconds lease_duration{15'000};
  std::chrono::milliseconds renew_deadline{10'000};
  std::chrono::milliseconds retry_period{2'000};
};

// The controllers the leader runs.
struct ControllersConfig {
  std::string namespace_name;  // ModelRevisions watched; "" = every namespace
  std::chrono::seconds resync_period{300};
  int revision_workers = 4;
  int cache_workers = 2;
};

// The mutating admission webhook for serving pods (webhook/pod_webhook.h). Every replica serves
// it, leader or not, so admission does not pause while the lease changes hands.
struct WebhookConfig {
  bool enabled = false;
  std::string address = "0.0.0.0";
  std::uint16_t port = 9443;
  int threads = 2;
  std::string certificate_file = "/etc/modelplane/webhook/tls.crt";  // PEM chain
  std::string key_file = "/etc/modelplane/webhook/tls.key";
  // Set on pods that name no scheduler ("" leaves schedulerName alone).
  std::string scheduler_name = "modelplane-scheduler";
  std::string volume_mode = "csi";                            // csi | hostPath
  std::string host_cache_root = "/var/lib/modelplane/cache";  // the agents' cacheRoot (hostPath)
};

// Answers for progressive-delivery webhooks (rollouts/rollout_gate_service.h), plain HTTP on
// every replica: Flagger calls it from inside the cluster and its answers carry no secrets.
struct RolloutGatesConfig {
  bool enabled = false;
  std::string address = "0.0.0.0";
  std::uint16_t port = 8082;  // 0: the kernel picks (tests)
};

// The object-store credentials endpoint for node agents (credentials/credentials_service.h),
// served on the webhook's TLS server: GET /credentials/v1/<namespace>/<secret>.
struct CredentialsConfig {
  bool enabled = false;
  // A listener of its own (the webhook's address, certificate and key), so that a
  // NetworkPolicy can admit only agents to it while the API server reaches the webhook, and a
  // flood of credential requests cannot take admission's threads. Absent: served on the
  // webhook's port (one thread fewer than the webhook has).
  std::optional<std::uint16_t> port;
  int threads = 4;  // with `port`: at most threads - 1 requests in flight (one per client)
  std::string audience = "modelplane-operator";  // the agents' projected tokens' audience
  std::string agent_namespace = "modelplane-system";
  std::string agent_service_account = "modelplane-node-agent";
};

// The signer of node agents' peer certificates (certificates/peer_certificate_signer.h): signs
// CertificateSigningRequests for modelplane.io/peer with the cluster's peer CA.
struct PeerCertificatesConfig {
  bool enabled = false;
  std::string ca_certificate_file = "/etc/modelplane/peer-ca/tls.crt";
  std::string ca_key_file = "/etc/modelplane/peer-ca/tls.key";
  // Whose requests are signed: the node agents' ServiceAccount.
  std::string agent_namespace = "modelplane-system";
  std::string agent_service_account = "modelplane-node-agent";
  std::chrono::seconds max_lifetime{std::chrono::hours(24 * 7)};
};

struct OperatorConfig {
  core::AdminConfig admin;
  core::LogConfig log;
  core::KubernetesConfig kubernetes;
  LeaderElectionConfig leader_election;
  ControllersConfig controllers;
  WebhookConfig webhook;
  RolloutGatesConfig rollout_gates;
  CredentialsConfig credentials;
  PeerCertificatesConfig peer_certificates;
  AdmissionOptions admission;
  // What revisions may name (core/policy/source_policy.h), the same as the agents'; absent:
  // every revision with sources is refused at admission and marked invalid.
  std::optional<core::SourcePolicy> source_policy;
};

void BindConfig(core::ConfigMap& map, LeaderElectionConfig& config);
void BindConfig(core::ConfigMap& map, PeerCertificatesConfig& config);
void BindConfig(core::ConfigMap& map, ControllersConfig& config);
void BindConfig(core::ConfigMap& map, WebhookConfig& config);
void BindConfig(core::ConfigMap& map, RolloutGatesConfig& config);
void BindConfig(core::ConfigMap& map, CredentialsConfig& config);
void BindConfig(core::ConfigMap& map, AdmissionOptions& config);
void BindConfig(core::ConfigMap& map, OperatorConfig& config);

}  // namespace modelplane::controller
