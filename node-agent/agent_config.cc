#include "node-agent/agent_config.h"

#include <filesystem>

#include "core/config/config_checks.h"

namespace modelplane::agent {

void BindConfig(core::ConfigMap& map, FetchConfig& config) {
  map.Optional("rangeSize", config.range_size);
  map.Optional("inFlight", config.in_flight, core::InRange(1, 1024));
  map.Optional("filesInFlight", config.files_in_flight, core::InRange(1, 256));
  map.Optional("bufferPool", config.buffer_pool);
  map.Optional("rangeTimeout", config.range_timeout);
  map.Optional("minGoodput", config.min_goodput);
  map.Optional("goodputWindow", config.goodput_window);
  map.Optional("concurrentStagings", config.concurrent_stagings, core::InRange(1, 64));
  if (config.range_size.bytes == 0 || config.range_size.bytes % 4096 != 0) {
    map.Fail("rangeSize must be a positive multiple of 4Ki");
  }
  if (config.buffer_pool.bytes < config.range_size.bytes) {
    map.Fail("bufferPool must hold at least one range");
  }
}

void BindConfig(core::ConfigMap& map, OperatorLeaseConfig& config) {
  map.Optional("namespace", config.namespace_name);
  map.Optional("name", config.name);
  map.Optional("pollInterval", config.poll_interval,
               core::InRange(std::chrono::milliseconds(100), std::chrono::milliseconds(60'000)));
  if (config.name.empty() != config.namespace_name.empty()) {
    map.Fail("operatorLease needs both namespace and name");
  }
}

void BindConfig(core::ConfigMap& map, AdmissionConfig& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("safeStreams", config.safe_streams, core::InRange(1, 64));
  map.Optional("startGrace", config.start_grace,
               core::InRange(std::chrono::seconds(0), std::chrono::seconds(600)));
  map.Optional("firstGrantWait", config.first_grant_wait,
               core::InRange(std::chrono::seconds(0), std::chrono::seconds(3600)));
  map.Optional("operatorLease", config.operator_lease);
  map.Optional("followerGrace", config.follower_grace,
               core::InRange(std::chrono::seconds(0), std::chrono::seconds(3600)));
  map.Optional("telemetryWindow", config.telemetry_window,
               core::InRange(std::chrono::seconds(1), std::chrono::seconds(600)));
  map.Optional("mediaProbe", config.media_probe);
  map.Optional("servingShare", config.serving_share);
  map.Optional("networkBandwidth", config.network_bandwidth);
  if (!(config.serving_share > 0.0 && config.serving_share <= 1.0)) {
    map.Fail("servingShare must be in (0, 1]");
  }
  if (config.first_grant_wait < config.start_grace) {
    map.Fail("firstGrantWait must not be shorter than startGrace");
  }
}

void BindConfig(core::ConfigMap& map, PeerConfig& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("listenAddress", config.listen_address);
  map.Optional("port", config.port);
  map.Optional("advertiseAddress", config.advertise_address);
  map.Optional("tokenKeyFile", config.token_key_file);
  map.Optional("plainHttp", config.plain_http);
  map.Optional("tlsCertificateFile", config.tls_certificate_file);
  map.Optional("tlsKeyFile", config.tls_key_file);
  map.Optional("clientCaFile", config.client_ca_file);
  map.Optional("certificateDirectory", config.certificate_directory);
  map.Optional("certificateLifetime", config.certificate_lifetime,
               core::InRange(std::chrono::seconds(3600), std::chrono::seconds(3600 * 24 * 365)));
  map.Optional("certificateWait", config.certificate_wait,
               core::InRange(std::chrono::seconds(1), std::chrono::seconds(3600)));
  if (!config.certificate_directory.empty() &&
      (!config.tls_certificate_file.empty() || !config.tls_key_file.empty() || config.plain_http)) {
    map.Fail(
        "certificateDirectory (certificates from the operator's signer) replaces "
        "tlsCertificateFile and tlsKeyFile, and needs TLS (plainHttp false)");
  }
  if (!config.certificate_directory.empty() && config.client_ca_file.empty()) {
    map.Fail("certificateDirectory needs clientCaFile, the peer CA that signs the certificates");
  }
  map.Optional("requireTickets", config.require_tickets);
  map.Optional("maxUploadRate", config.max_upload_rate);
  map.Optional("maxStreams", config.max_streams, core::InRange(1, 4096));
  map.Optional("maxReaders", config.max_readers, core::InRange(0, 4096));
}

void BindConfig(core::ConfigMap& map, CsiConfig& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("socketPath", config.socket_path);
  map.Optional("registrationSocketPath", config.registration_socket_path);
  map.Optional("targetRoot", config.target_root);
  // sockaddr_un holds 107 bytes and a NUL.
  const auto is_socket_path = [](const std::string& path) {
    return !path.empty() && path.front() == '/' && path.size() <= 107;
  };
  if (!is_socket_path(config.socket_path)) {
    map.Fail("socketPath must be an absolute path of at most 107 bytes");
  }
  if (!config.registration_socket_path.empty() &&
      !is_socket_path(config.registration_socket_path)) {
    map.Fail("registrationSocketPath must be empty or an absolute path of at most 107 bytes");
  }
  if (config.registration_socket_path == config.socket_path) {
    map.Fail("registrationSocketPath must differ from socketPath");
  }
  const std::filesystem::path root(config.target_root);
  if (!root.is_absolute() || root.lexically_normal() != root || root == "/" ||
      config.target_root.back() == '/') {
    map.Fail("targetRoot must be a normalized absolute folder other than /");
  }
}

void BindConfig(core::ConfigMap& map, EvictionConfig& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("highPercent", config.high_percent);
  map.Optional("lowPercent", config.low_percent);
  map.Optional("kubeletFilesystem", config.kubelet_filesystem);
  map.Optional("kubeletRoot", config.kubelet_root);
  map.Optional("kubeletImageGcHighPercent", config.kubelet_image_gc_high_percent);
  map.Optional("kubeletEvictionHardAvailablePercent",
               config.kubelet_eviction_hard_available_percent);
  map.Optional("kubeletMarginPercent", config.kubelet_margin_percent);
  map.Optional("deleteRate", config.delete_rate);
  map.Optional("useHalfLife", config.use_half_life,
               core::InRange(std::chrono::seconds(60), std::chrono::hours(24 * 365)));
  map.Optional("originDownWindow", config.origin_down_window);
  map.Optional("interval", config.interval,
               core::InRange(std::chrono::milliseconds(100), std::chrono::hours(1)));
  map.Optional("lastUsedResolution", config.last_used_resolution,
               core::InRange(std::chrono::seconds(1), std::chrono::hours(24)));
  map.Optional("defaultPeerRate", config.default_peer_rate);
  map.Optional("defaultOriginRate", config.default_origin_rate);
  if (!ParseKubeletFilesystem(config.kubelet_filesystem)) {
    map.Fail("kubeletFilesystem must be auto, shared or separate");
  }
  if (auto valid = ValidateWatermarkSettings(ToWatermarkSettings(config)); !valid) {
    map.Fail(valid.error().message());
  }
  if (config.default_peer_rate.bytes == 0 || config.default_origin_rate.bytes == 0) {
    map.Fail("defaultPeerRate and defaultOriginRate must be positive");
  }
}

WatermarkSettings ToWatermarkSettings(const EvictionConfig& config) {
  return {.high_percent = config.high_percent,
          .low_percent = config.low_percent,
          .kubelet_filesystem =
              ParseKubeletFilesystem(config.kubelet_filesystem).value_or(KubeletFilesystem::kAuto),
          .kubelet_root = config.kubelet_root,
          .kubelet_image_gc_high_percent = config.kubelet_image_gc_high_percent,
          .kubelet_eviction_hard_available_percent = config.kubelet_eviction_hard_available_percent,
          .kubelet_margin_percent = config.kubelet_margin_percent};
}

void BindConfig(core::ConfigMap& map, CredentialsConfig& config) {
  map.Optional("url", config.url);
  map.Optional("tokenFile", config.token_file);
  map.Optional("caFile", config.ca_file);
  map.Optional("ttl", config.ttl);
  if (map.ok() && !config.url.empty() && config.token_file.empty()) {
    map.Fail("tokenFile must be set with url");
  }
}

void BindConfig(core::ConfigMap& map, AgentConfig& config) {
  map.Optional("admin", config.admin);
  map.Optional("log", config.log);
  map.Optional("kubernetes", config.kubernetes);
  map.Optional("nodeName", config.node_name);
  map.Optional("cacheRoot", config.cache_root);
  map.Optional("capacity", config.capacity);
  map.Optional("directIo", config.direct_io);
  map.Optional("credentials", config.credentials);
  map.Optional("sourcePolicy", config.source_policy);
  map.Optional("fetch", config.fetch);
  map.Optional("admission", config.admission);
  map.Optional("peers", config.peers);
  map.Optional("csi", config.csi);
  map.Optional("eviction", config.eviction);
  map.Optional("statusInterval", config.status_interval);
  map.Optional("resyncPeriod", config.resync_period);
  if (!config.cache_root.empty() && config.cache_root.front() != '/') {
    map.Fail("cacheRoot must be an absolute path");
  }
}

}  // namespace modelplane::agent
