#include "node-agent/peer/serve_peers_command.h"

#include <charconv>
#include <csignal>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <pthread.h>

#include "core/clock/clock.h"
#include "core/config/byte_size.h"
#include "core/log/log_level.h"
#include "core/metrics/metrics_registry.h"
#include "node-agent/peer/directory_blob_catalog.h"

namespace modelplane::agent {
namespace {

std::unexpected<core::Error> BadFlag(std::string message) {
  return core::MakeError(core::ErrorCode::kInvalidArgument, std::move(message));
}

// "host:port" or "[v6]:port".
core::Status ParseListen(std::string_view listen, PeerServerOptions& options) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return BadFlag(fmt::format("--listen {}: expected host:port", listen));
  }
  std::string_view host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string_view port_text = listen.substr(colon + 1);
  unsigned port = 0;
  const auto [end, error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (error != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return BadFlag(fmt::format("--listen {}: bad port", listen));
  }
  options.address = std::string(host);
  options.port = static_cast<std::uint16_t>(port);
  return core::Ok();
}

}  // namespace

core::Result<PeerServerOptions> PeerServerOptionsFromFlags(const ServePeersFlags& flags) {
  PeerServerOptions options;
  if (flags.cache_root.empty()) return BadFlag("--cache-root is required");
  if (auto parsed = ParseListen(flags.listen, options); !parsed) {
    return std::unexpected(parsed.error());
  }
  options.advertise_address = flags.advertise_address;
  const bool tls = !flags.tls_certificate.empty() || !flags.tls_key.empty();
  if (tls && (flags.tls_certificate.empty() || flags.tls_key.empty())) {
    return BadFlag("--tls-cert and --tls-key go together");
  }
  if (tls && flags.insecure_http) return BadFlag("--insecure-http contradicts --tls-cert");
  if (!tls && !flags.insecure_http) {
    return BadFlag("give --tls-cert and --tls-key, or --insecure-http (loopback benchmarks only)");
  }
  if (!tls && !flags.client_ca.empty()) return BadFlag("--client-ca needs --tls-cert");
  if (flags.client_ca.empty() && flags.token_key_file.empty()) {
    return BadFlag("give --client-ca (mutual TLS) or --token-key-file, or both");
  }
  if (tls) {
    options.tls = core::TlsServerOptions{.certificate_chain_file = flags.tls_certificate,
                                         .private_key_file = flags.tls_key,
                                         .client_ca_file = flags.client_ca};
  }
  options.allow_plain_http = flags.insecure_http;
  if (!flags.token_key_file.empty()) {
    auto key = PeerTokenKey::Load(flags.token_key_file);
    if (!key) return std::unexpected(key.error().Wrap("--token-key-file"));
    options.token_key = std::move(*key);
  }
  auto rate = core::ParseByteSize(flags.max_upload_rate);
  if (!rate) return std::unexpected(rate.error().Wrap("--max-upload-rate"));
  options.max_upload_bytes_per_second = *rate;
  if (flags.max_streams == 0) return BadFlag("--max-streams must be positive");
  options.max_streams = flags.max_streams;
  options.max_readers = flags.max_readers;
  return options;
}

int ServePeers(const ServePeersFlags& flags, core::CancellationToken& stop,
               const core::Logger& logger) {
  auto options = PeerServerOptionsFromFlags(flags);
  if (!options) {
    logger.Error("serve_peers_flags_rejected", {{"error", options.error().ToString()}});
    return 2;
  }
  const DirectoryBlobCatalog catalog(flags.cache_root);
  core::MetricsRegistry metrics;
  const core::SystemClock clock;
  auto server = PeerServer::Create(std::move(*options), catalog, metrics, logger, clock);
  if (!server) {
    logger.Error("serve_peers_failed", {{"error", server.error().ToString()}});
    return 1;
  }
  logger.Info("serving_peers", {{"cache_root", flags.cache_root},
                                {"endpoint", (*server)->endpoint()},
                                {"port", static_cast<std::uint64_t>((*server)->port())}});
  while (stop.SleepFor(clock, std::chrono::hours(1))) {
  }
  (*server)->Stop();
  return 0;
}

CLI::App* DeclareServePeersFlags(CLI::App& parent, ServePeersFlags& flags) {
  CLI::App* app = parent.add_subcommand("serve-peers", "serve this node's verified blobs to peers");
  app->add_option("--cache-root", flags.cache_root, "cache directory (blobs/sha256/<hex>)")
      ->required();
  app->add_option("--listen", flags.listen, "address:port to listen on")->capture_default_str();
  app->add_option("--advertise-address", flags.advertise_address,
                  "host peers dial (tokens are accepted for it only); default the --listen host");
  app->add_option("--tls-cert", flags.tls_certificate, "server certificate chain (PEM)");
  app->add_option("--tls-key", flags.tls_key, "server private key (PEM)");
  app->add_option("--client-ca", flags.client_ca, "peer CA that signs client certificates");
  app->add_option("--token-key-file", flags.token_key_file, "shared HMAC key for peer tokens");
  app->add_flag("--insecure-http", flags.insecure_http,
                "plain HTTP with tokens (loopback benchmarks only)");
  app->add_option("--max-upload-rate", flags.max_upload_rate,
                  "upload cap per second shared by all streams, e.g. 1GiB; 0 unlimited")
      ->capture_default_str();
  app->add_option("--max-streams", flags.max_streams, "concurrent blob bodies")
      ->capture_default_str();
  app->add_option("--max-readers", flags.max_readers,
                  "readers served at once, each until it stops asking; 0 no limit")
      ->capture_default_str();
  app->add_option("--log-level", flags.log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  return app;
}

Subcommand AddServePeersCommand(CLI::App& parent) {
  auto flags = std::make_shared<ServePeersFlags>();
  CLI::App* app = DeclareServePeersFlags(parent, *flags);
  return Subcommand{.app = app, .run = [flags] {
                      auto level = core::ParseLogLevel(flags->log_level);
                      if (!level) {
                        std::cerr << "serve-peers: " << level.error().ToString() << "\n";
                        return 2;
                      }
                      auto logger =
                          core::Logger::Create({.component = "node-agent.peer", .level = *level});
                      if (!logger) {
                        std::cerr << "serve-peers: " << logger.error().ToString() << "\n";
                        return 1;
                      }
                      // Only the watcher thread takes the signals; every thread the server
                      // starts inherits the mask.
                      sigset_t signals;
                      sigemptyset(&signals);
                      sigaddset(&signals, SIGTERM);
                      sigaddset(&signals, SIGINT);
                      pthread_sigmask(SIG_BLOCK, &signals, nullptr);
                      core::CancellationToken stop;
                      std::thread watcher([&] {
                        int received = 0;
                        sigwait(&signals, &received);
                        logger->Info("shutdown_signal_received", {{"signal", received}});
                        stop.Cancel();
                      });
                      const int code = ServePeers(*flags, stop, *logger);
                      if (!stop.cancelled()) {
                        // Failed before a signal: wake the watcher with one of its own (it
                        // waits for SIGTERM in sigwait, so the signal ends the wait, not it).
                        // NOLINTNEXTLINE(bugprone-bad-signal-to-kill-thread)
                        pthread_kill(watcher.native_handle(), SIGTERM);
                      }
                      watcher.join();
                      return code;
                    }};
}

}  // namespace modelplane::agent
