#include "node-agent/agent_config.h"

#include "core/config/config_checks.h"

namespace modelplane::agent {

void BindConfig(core::ConfigMap& map, FetchConfig& config) {
  map.Optional("rangeSize", config.range_size);
  map.Optional("inFlight", config.in_flight, core::InRange(1, 1024));
  map.Optional("filesInFlight", config.files_in_flight, core::InRange(1, 256));
  map.Optional("bufferPool", config.buffer_pool);
  map.Optional("rangeTimeout", config.range_timeout);
  map.Optional("concurrentStagings", config.concurrent_stagings, core::InRange(1, 64));
  if (config.range_size.bytes == 0 || config.range_size.bytes % 4096 != 0) {
    map.Fail("rangeSize must be a positive multiple of 4Ki");
  }
  if (config.buffer_pool.bytes < config.range_size.bytes) {
    map.Fail("bufferPool must hold at least one range");
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
  map.Optional("maxUploadRate", config.max_upload_rate);
  map.Optional("maxStreams", config.max_streams, core::InRange(1, 4096));
}

void BindConfig(core::ConfigMap& map, AgentConfig& config) {
  map.Optional("admin", config.admin);
  map.Optional("log", config.log);
  map.Optional("kubernetes", config.kubernetes);
  map.Optional("nodeName", config.node_name);
  map.Optional("cacheRoot", config.cache_root);
  map.Optional("capacity", config.capacity);
  map.Optional("directIo", config.direct_io);
  map.Optional("secretsDirectory", config.secrets_directory);
  map.Optional("fetch", config.fetch);
  map.Optional("peers", config.peers);
  map.Optional("statusInterval", config.status_interval);
  map.Optional("resyncPeriod", config.resync_period);
  if (!config.cache_root.empty() && config.cache_root.front() != '/') {
    map.Fail("cacheRoot must be an absolute path");
  }
}

}  // namespace modelplane::agent
