// Builds the OpenSSL contexts of the HTTP server and client, and reads a verified peer's identity.
//
// Contexts are made once and shared by every connection (OpenSSL's SSL_CTX is thread-safe once
// configured). Failures to load keys or certificates are reported as Errors, never thrown.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <boost/asio/ssl/context.hpp>
#include <openssl/types.h>

#include "core/error/error.h"
#include "core/http/server_options.h"
#include "core/http/server_request.h"

namespace modelplane::core {

struct TlsClientOptions {
  // CA certificates that verify servers, from a file and/or PEM text (e.g. a mounted Secret's
  // ca.crt read by the caller); both empty: the system default trust store.
  std::string ca_file;
  std::string ca_pem;
  // Optional client certificate for mutual TLS (both or neither).
  std::string certificate_chain_file;
  std::string private_key_file;
  // The name the server's certificate must carry (and SNI), instead of the host dialed: peers
  // are dialed by address but identified by node (docs/peer.md). Empty: the host dialed.
  std::string server_name;
};

[[nodiscard]] Result<std::unique_ptr<boost::asio::ssl::context>> MakeServerTlsContext(
    const TlsServerOptions& options);

[[nodiscard]] Result<std::unique_ptr<boost::asio::ssl::context>> MakeClientTlsContext(
    const TlsClientOptions& options);

// Sets SNI (for names) and the name or IP address the server certificate must carry.
[[nodiscard]] Status SetClientVerifyHost(SSL* ssl, const std::string& host);

// The verified peer certificate of a connection, if it sent one.
[[nodiscard]] std::optional<PeerCertificate> GetPeerCertificate(SSL* ssl);

}  // namespace modelplane::core
