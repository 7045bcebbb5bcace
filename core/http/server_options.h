// Configuration of an HttpServer: where it listens, its limits and deadlines, TLS, and the hooks
// behind the built-in /healthz, /readyz and /metrics endpoints.
//
// Thread safety: a plain value, copied into the server at creation.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/http/http_log.h"

namespace modelplane::core {

struct TlsServerOptions {
  std::string certificate_chain_file;  // PEM: the server certificate, then intermediates
  std::string private_key_file;        // PEM
  // When set, clients must present a certificate that verifies against this CA bundle (mutual
  // TLS); the verified subject reaches handlers as ServerRequest::peer_certificate.
  std::string client_ca_file;
  // With client_ca_file: true refuses the handshake without a verified client certificate; false
  // lets every client finish it and leaves the decision to handlers (peer_certificate is set only
  // for a verified certificate), so a server can accept other credentials too and answer 401.
  bool require_client_certificate = true;
};

struct ServerOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: the kernel picks one; HttpServer::port() reports it
  int threads = 2;

  std::size_t header_limit = 16 * 1024;    // larger request headers get 431
  std::uint64_t body_limit = 1024 * 1024;  // larger request bodies get 413
  std::size_t max_connections = 10'000;    // accepted beyond this are closed at once
  // Requests with a body being read or handled at once; beyond it a request gets 503 with
  // Retry-After as soon as its headers are read, its body unread (so bodies in memory stay
  // below this times body_limit). 0: no bound.
  std::size_t max_concurrent_bodies = 0;

  // Every read and write has one of these deadlines.
  std::chrono::milliseconds idle_timeout{60'000};       // keep-alive wait for the next request
  std::chrono::milliseconds header_timeout{10'000};     // first byte to end of headers
  std::chrono::milliseconds body_timeout{30'000};       // whole request body
  std::chrono::milliseconds write_timeout{30'000};      // each write (one chunk of a stream)
  std::chrono::milliseconds handshake_timeout{10'000};  // TLS handshake
  std::chrono::milliseconds stop_grace{10'000};  // Stop() waits this long for in-flight requests

  // Read/write unit of streamed bodies; 128 KiB stays in cache between the pread and the send
  // (measured cheaper per byte than 1 MiB, see docs/http.md).
  std::size_t stream_chunk_size = 128 * 1024;
  // File-backed streamed bodies on plain connections go out with sendfile(2): no copy through
  // the server's memory. Off: pread + send in stream_chunk_size pieces (see docs/http.md).
  bool use_sendfile = true;

  std::optional<TlsServerOptions> tls;

  std::function<bool()> readiness;       // /readyz: 200 when true (or unset), else 503
  std::function<std::string()> metrics;  // /metrics: Prometheus text exposition
  HttpLogFunction log;
};

}  // namespace modelplane::core
