// modelplane-node-agent's configuration file (the `run` daemon).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/config/byte_size.h"
#include "core/config/config_map.h"
#include "core/policy/source_policy.h"
#include "core/runtime/runtime_config.h"
#include "node-agent/eviction/watermarks.h"

namespace modelplane::agent {

// How the fetch engine moves bytes (node-agent/fetch/fetch_engine.h).
struct FetchConfig {
  core::ByteSize range_size{8ull << 20};
  int in_flight = 16;
  int files_in_flight = 8;  // files fetched and hashed at once, per staging
  core::ByteSize buffer_pool{256ull << 20};
  std::chrono::milliseconds range_timeout{60'000};
  // A staging that lands less than min_goodput bytes a second over goodput_window gives up
  // (failed, retried later) saying why; 0: never (FetchOptions).
  core::ByteSize min_goodput{0};
  std::chrono::milliseconds goodput_window{60'000};
  // Revisions staged at once; each uses up to in_flight requests from the shared pool.
  int concurrent_stagings = 2;
};

// The operator's leader-election Lease, which tells the agent the operator is alive
// (node-agent/controller/operator_lease_watch.h). Empty name: not read.
struct OperatorLeaseConfig {
  std::string namespace_name;
  std::string name;
  std::chrono::milliseconds poll_interval{2'000};
};

// Admission of remote reads (node-agent/fetch/source_admission.h, docs/admission.md).
struct AdmissionConfig {
  // Off: no grants are expected, every source is read at its own concurrency (a cluster whose
  // operator runs without the admission controller).
  bool enabled = true;
  int safe_streams = 2;  // per remote source while no valid grant is held
  // How long a staging waits for a first grant for a source; while the operator's Lease shows
  // it alive, up to first_grant_wait instead.
  std::chrono::seconds start_grace{10};
  std::chrono::seconds first_grant_wait{60};
  OperatorLeaseConfig operator_lease;
  // How long a follower (granted 0 streams) waits for peers after its grant lapsed.
  std::chrono::seconds follower_grace{60};
  // The window the telemetry in ModelCache status covers.
  std::chrono::seconds telemetry_window{10};
  // Written once at start into the cache folder and read back to measure the media bandwidth
  // (status.mediaBandwidthBytesPerSecond); 0: not measured.
  core::ByteSize media_probe{64ull << 20};
  // While pods that use a revision run on the node, stagings write at most this share of the
  // measured media bandwidth and peer uploads send at most this share of networkBandwidth.
  double serving_share = 0.5;
  core::ByteSize network_bandwidth{0};  // bytes per second of the node's NIC; 0: unknown
};

// The server other agents fetch verified blobs from (node-agent/peer).
struct PeerConfig {
  bool enabled = true;
  std::string listen_address = "0.0.0.0";
  std::uint16_t port = 7443;  // 0: the kernel picks (tests)
  // What other agents dial, published in ModelCache status; empty: POD_IP from the downward
  // API, else the listen address.
  std::string advertise_address;
  std::string token_key_file;  // shared HMAC key (a mounted Secret); required when enabled
  bool plain_http = false;     // no TLS: loopback tests and benchmarks only
  std::string tls_certificate_file;
  std::string tls_key_file;
  std::string client_ca_file;  // peers' CA: verifies servers, and clients for mutual TLS
  // Set: this node's own certificate, asked of the operator's signer (a CertificateSigningRequest
  // for modelplane.io/peer; node-agent/peer/peer_certificate_requester.h) and kept here, instead
  // of tls_certificate_file and tls_key_file; clients then check that a peer's certificate
  // names the node whose ModelCache advertised it.
  std::string certificate_directory;
  std::chrono::seconds certificate_lifetime{std::chrono::hours(24 * 7)};
  // How long the agent waits at start for its first certificate before it gives up (and exits,
  // so the pod's restarts show it); a valid one on disk is used at once.
  std::chrono::seconds certificate_wait{std::chrono::minutes(5)};
  // With per-node certificates (certificate_directory): serve a node only the blobs the
  // operator's ticket in its request covers (node-agent/peer/peer_scope.h), checked with
  // client_ca_file. Without them no request names a node, so nothing is checked.
  bool require_tickets = true;
  core::ByteSize max_upload_rate{0};  // bytes per second for all streams; 0: unlimited
  int max_streams = 32;               // why 32: PeerServerOptions::max_streams
  int max_readers = 4;                // PeerServerOptions::max_readers; 0: no limit
};

// The CSI node plugin csi.modelplane.io (node-agent/csi, docs/csi.md). Off by default: it
// mounts, so the agent must run privileged (the chart does that only when CSI is on).
struct CsiConfig {
  bool enabled = false;
  // Where kubelet dials the plugin.
  std::string socket_path = "/var/lib/kubelet/plugins/csi.modelplane.io/csi.sock";
  // Where the agent registers the plugin with kubelet's plugin watcher (pluginregistration/v1),
  // in kubelet's plugins_registry folder (the chart sets
  // <kubeletDir>/plugins_registry/csi.modelplane.io-reg.sock); empty: something else registers
  // it (node-driver-registrar).
  std::string registration_socket_path;
  // Target paths must lie below this folder (kubelet's pods folder); others are refused.
  std::string target_root = "/var/lib/kubelet/pods";
};

// Retention and eviction (node-agent/eviction, docs/eviction.md).
struct EvictionConfig {
  bool enabled = true;  // false: nothing is evicted or refused (revoked revisions still purge)
  double high_percent = 80;
  double low_percent = 70;
  // Whether the cache shares kubelet's filesystem: auto (compare with kubeletRoot), shared,
  // separate. Shared caps the watermarks below kubelet's image GC and eviction thresholds.
  std::string kubelet_filesystem = "auto";
  std::string kubelet_root = "/var/lib/kubelet";
  double kubelet_image_gc_high_percent = 85;
  double kubelet_eviction_hard_available_percent = 10;  // nodefs.available
  double kubelet_margin_percent = 5;
  core::ByteSize delete_rate{0};  // bytes per second eviction deletes; 0: unpaced
  std::chrono::seconds use_half_life{std::chrono::hours(24)};
  std::chrono::seconds origin_down_window{600};
  std::chrono::milliseconds interval{30'000};  // a pass at least this often
  std::chrono::seconds last_used_resolution{300};
  core::ByteSize default_peer_rate{1ull << 30};  // refetch price before a fetch measured it
  core::ByteSize default_origin_rate{100ull << 20};
};

// Where credentialsSecretRef is resolved: the operator's credentials endpoint
// (node-agent/sources/operator_credentials.h). Empty url: a revision that names a Secret fails.
struct CredentialsConfig {
  std::string url;         // https://<operator webhook Service>
  std::string token_file;  // projected ServiceAccount token, audience modelplane-operator
  std::string ca_file;     // the operator's CA
  std::chrono::milliseconds ttl{300'000};  // how long an answer is kept in memory
};

struct AgentConfig {
  core::AdminConfig admin;
  core::LogConfig log;
  core::KubernetesConfig kubernetes;
  // The node this agent serves; empty: the NODE_NAME environment variable (downward API).
  std::string node_name;
  std::string cache_root = "/var/lib/modelplane/cache";
  core::ByteSize capacity{0};  // 0: the filesystem holding the cache root
  bool direct_io = true;
  CredentialsConfig credentials;
  // What revisions may name (core/policy/source_policy.h); absent: no revision source is read,
  // only peers.
  std::optional<core::SourcePolicy> source_policy;
  FetchConfig fetch;
  AdmissionConfig admission;
  PeerConfig peers;
  CsiConfig csi;
  EvictionConfig eviction;
  // Status writes are coalesced: at most one per interval while bytes move (state changes go
  // out at once).
  std::chrono::milliseconds status_interval{1'000};
  std::chrono::seconds resync_period{300};
};

void BindConfig(core::ConfigMap& map, AgentConfig& config);
void BindConfig(core::ConfigMap& map, FetchConfig& config);
void BindConfig(core::ConfigMap& map, CredentialsConfig& config);
void BindConfig(core::ConfigMap& map, OperatorLeaseConfig& config);
void BindConfig(core::ConfigMap& map, AdmissionConfig& config);
void BindConfig(core::ConfigMap& map, PeerConfig& config);
void BindConfig(core::ConfigMap& map, CsiConfig& config);
void BindConfig(core::ConfigMap& map, EvictionConfig& config);
[[nodiscard]] WatermarkSettings ToWatermarkSettings(const EvictionConfig& config);

}  // namespace modelplane::agent
