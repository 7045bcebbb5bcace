// `modelplane-node-agent serve-peers`: runs a PeerServer over a cache directory until SIGTERM or
// SIGINT, for nodes (and benchmarks) that serve peers without the full agent.
//
//   serve-peers --cache-root DIR [--listen 127.0.0.1:7443] [--advertise-address HOST]
//               (--tls-cert F --tls-key F [--client-ca F] [--token-key-file F]
//                | --token-key-file F --insecure-http)
//               [--max-upload-rate 1GiB] [--max-streams 16] [--log-level info]
//
// Tokens are accepted only for the endpoint "<advertise-address or listen host>:<port>", so
// clients must dial that spelling (`fetch --peer`). Blobs come from DirectoryBlobCatalog until the
// cache store's catalog replaces it. Thread safety: the returned Subcommand is run once, from the
// main thread.
#pragma once

#include <cstdint>
#include <string>

#include "core/cancel/cancellation_token.h"
#include "core/error/error.h"
#include "core/log/logger.h"
#include "node-agent/cli/subcommand.h"
#include "node-agent/peer/peer_server.h"

namespace modelplane::agent {

struct ServePeersFlags {
  std::string cache_root;
  std::string listen = "127.0.0.1:7443";
  std::string advertise_address;  // the host clients dial; empty: the --listen host
  std::string tls_certificate;
  std::string tls_key;
  std::string client_ca;
  std::string token_key_file;
  bool insecure_http = false;
  std::string max_upload_rate = "0";  // a byte size per second; 0 unlimited
  std::size_t max_streams = 32;       // why 32: PeerServerOptions::max_streams
  std::size_t max_readers = 4;        // PeerServerOptions::max_readers; 0: no limit
  std::string log_level = "info";
};

// The server options the flags stand for; kInvalidArgument says which flag is wrong.
[[nodiscard]] core::Result<PeerServerOptions> PeerServerOptionsFromFlags(
    const ServePeersFlags& flags);

// Serves until `stop` fires; returns the exit code (0, 1 failed, 2 bad flags).
[[nodiscard]] int ServePeers(const ServePeersFlags& flags, core::CancellationToken& stop,
                             const core::Logger& logger);

// Declares the serve-peers subcommand and binds its flags to `flags`, which must outlive parsing.
[[nodiscard]] CLI::App* DeclareServePeersFlags(CLI::App& parent, ServePeersFlags& flags);

[[nodiscard]] Subcommand AddServePeersCommand(CLI::App& parent);

}  // namespace modelplane::agent
