#include "operator/operator_config.h"

namespace modelplane::controller {

using namespace std::chrono_literals;

void BindConfig(core::ConfigMap& map, LeaderElectionConfig& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("namespace", config.namespace_name);
  map.Optional("leaseName", config.lease_name);
  map.Optional("leaseDuration", config.lease_duration, core::InRange(1s, 10min));
  map.Optional("renewDeadline", config.renew_deadline, core::InRange(500ms, 10min));
  map.Optional("retryPeriod", config.retry_period, core::InRange(100ms, 1min));
  if (config.renew_deadline >= config.lease_duration) {
    map.Fail("renewDeadline must be shorter than leaseDuration");
  }
}

void BindConfig(core::ConfigMap& map, ControllersConfig& config) {
  map.Optional("namespace", config.namespace_name);
  map.Optional("resyncPeriod", config.resync_period, core::InRange(0s, 24h));
  map.Optional("revisionWorkers", config.revision_workers, core::InRange(1, 64));
  map.Optional("cacheWorkers", config.cache_workers, core::InRange(1, 64));
}

void BindConfig(core::ConfigMap& map, WebhookConfig& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("address", config.address);
  map.Optional("port", config.port);  // 0: the kernel picks (tests); the log line says which
  map.Optional("threads", config.threads, core::InRange(1, 64));
  map.Optional("certificateFile", config.certificate_file);
  map.Optional("keyFile", config.key_file);
  map.Optional("schedulerName", config.scheduler_name);
  map.Optional("volumeMode", config.volume_mode, core::OneOf({"csi", "hostPath"}));
  map.Optional("hostCacheRoot", config.host_cache_root);
  if (config.host_cache_root.empty() || config.host_cache_root.front() != '/') {
    map.Fail("hostCacheRoot must be an absolute path");
  }
}

void BindConfig(core::ConfigMap& map, RolloutGatesConfig& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("address", config.address);
  map.Optional("port", config.port);
}

void BindConfig(core::ConfigMap& map, CredentialsConfig& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("port", config.port);  // 0: the kernel picks (tests); the log line says which
  map.Optional("threads", config.threads, core::InRange(2, 64));
  map.Optional("audience", config.audience);
  map.Optional("agentNamespace", config.agent_namespace);
  map.Optional("agentServiceAccount", config.agent_service_account);
  if (config.enabled && (config.audience.empty() || config.agent_namespace.empty() ||
                         config.agent_service_account.empty())) {
    map.Fail("audience, agentNamespace and agentServiceAccount must be set");
  }
}

void BindConfig(core::ConfigMap& map, AdmissionOptions& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("interval", config.interval, core::InRange(100ms, 1h));
  map.Optional("stepInterval", config.step_interval, core::InRange(100ms, 1h));
  map.Optional("grantTtl", config.grant_ttl, core::InRange(1s, 1h));
  map.Optional("seederStallTimeout", config.seeder_stall_timeout, core::InRange(1s, 1h));
  map.Optional("wantedStreams", config.wanted_streams, core::InRange(1, 1024));
  if (config.grant_ttl < 2 * std::chrono::duration_cast<std::chrono::seconds>(config.interval)) {
    map.Fail("grantTtl must be at least two intervals, or grants lapse between passes");
  }
}

void BindConfig(core::ConfigMap& map, PeerCertificatesConfig& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("caCertificateFile", config.ca_certificate_file);
  map.Optional("caKeyFile", config.ca_key_file);
  map.Optional("agentNamespace", config.agent_namespace);
  map.Optional("agentServiceAccount", config.agent_service_account);
  map.Optional("maxLifetime", config.max_lifetime, core::InRange(1h, 24h * 365));
}

void BindConfig(core::ConfigMap& map, OperatorConfig& config) {
  map.Optional("admin", config.admin);
  map.Optional("log", config.log);
  map.Optional("kubernetes", config.kubernetes);
  map.Optional("leaderElection", config.leader_election);
  map.Optional("controllers", config.controllers);
  map.Optional("webhook", config.webhook);
  map.Optional("rolloutGates", config.rollout_gates);
  map.Optional("credentials", config.credentials);
  if (config.credentials.enabled && !config.webhook.enabled) {
    map.Fail("credentials are served with the webhook's TLS certificate: enable webhook");
  }
  map.Optional("peerCertificates", config.peer_certificates);
  map.Optional("admission", config.admission);
  map.Optional("sourcePolicy", config.source_policy);
}

}  // namespace modelplane::controller
