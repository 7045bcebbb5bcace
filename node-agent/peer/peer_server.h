// PeerServer: serves the verified blobs of this node's cache to other node agents, so that a
// rollout of N replicas reads the model repository about once instead of N times.
//
//   GET|HEAD /v1/blobs/sha256:<64 lower-case hex>   (single "Range: bytes=a-b" honoured)
//
// Answers: 200/206 with the bytes; 401 without credentials or with bad ones; 400 for a malformed
// digest; 403 with a fixed reason when peer scope is on and the request's ticket does not cover
// the blob for the node that asks (peer_scope.h); 404 for a blob the catalog does not hold as
// verified; 416 for a range outside the blob; 503 with Retry-After while the stream cap is reached
// or the server is stopping.
//
// Authentication: a client certificate that verifies against the cluster's peer CA (mutual TLS),
// or an HMAC token (peer_token.h) signed for this server's endpoint(); either suffices when both
// are configured. The TLS handshake never fails for a missing or foreign certificate: the request
// gets a 401 that says why, which a client can report, rather than an opaque handshake error.
// Tokens over plain HTTP are refused unless allow_plain_http is set (loopback benchmarks), and
// the server logs that it is insecure. Requests that arrive before the endpoint is known (the
// port is bound first) are answered 503.
//
// Fairness: one ByteThrottle shared by all streams caps the upload rate, at most max_streams GET
// bodies are in flight, and at most max_readers readers are served at once, each until it stops
// asking (reader_admission.h); HEAD costs no stream. Unthrottled plain-HTTP bodies go
// out with sendfile(2), so the server never copies blob bytes; throttled ones are read in
// stream_chunk_size pieces, each paid for before it is sent.
//
// Reads only from the BlobCatalog (verified blobs); a blob is opened once per request, so a
// garbage collection that unlinks it mid-stream does not change the bytes being served.
//
// Thread safety: port(), endpoint() and streams_in_flight() may be called from any thread. Stop()
// (also run by the destructor) refuses new requests with 503, waits up to stop_grace for bodies in
// flight, then cuts those still running; it is idempotent and must not be called from a handler.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/http/server_options.h"
#include "core/log/logger.h"
#include "core/metrics/metrics_registry.h"
#include "core/pki/statement_signature.h"
#include "node-agent/peer/peer_token.h"
#include "node-agent/peer/reader_admission.h"
#include "node-agent/store/blob_catalog.h"

namespace modelplane::agent {

struct PeerServerOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: the kernel picks one; port() reports it
  // The host peers dial, as advertised in ModelCache status; empty: `address`. With the bound
  // port it makes endpoint(), the only audience this server accepts tokens for.
  std::string advertise_address;

  // Server certificate and key; client_ca_file (the cluster's peer CA) enables mutual TLS.
  // require_client_certificate is ignored: the server always decides per request (see above).
  std::optional<core::TlsServerOptions> tls;
  std::optional<PeerTokenKey> token_key;
  PeerTokenPolicy token_policy;
  // Without TLS, tokens travel in clear text and bytes can be read by anyone on the path.
  bool allow_plain_http = false;
  // Peer scope (peer_scope.h): the peer CA's certificate(s), which verify the operator's
  // tickets. Set, a blob is served only to a node whose certificate names it and whose ticket
  // covers the blob (403 with the reason otherwise); tokens alone then open nothing, since they
  // name no node. Unset: any authenticated peer reads any verified blob.
  std::shared_ptr<const core::StatementVerifier> ticket_verifier;

  std::uint64_t max_upload_bytes_per_second = 0;  // 0: unlimited
  // A reader takes up to 8 streams of one peer (PeerRangeSourceOptions::max_concurrency), so 32
  // serve four readers at once. With 16, a staging peer served two, and a zone's files spread
  // from node to node two readers per holder: 2.4 times a single node's time for 1,000 nodes
  // where 32 take 1.6 (bench/rollout-sim, docs/scale.md). What serving may take from the node
  // is capped by max_upload_bytes_per_second, not by this.
  std::size_t max_streams = 32;
  // Readers served at once, each to completion (reader_admission.h): a reader takes up to 8
  // streams, so 4 fill the streams. 0: no limit. A reader keeps its place this long after its
  // last body ended (its next range is usually already on its way).
  std::size_t max_readers = 4;
  std::chrono::milliseconds reader_keep{2'000};
  std::chrono::seconds retry_after{1};  // sent with 503

  int threads = 0;  // 0: max_streams + 2, so throttled or disk-bound bodies never block answers
  std::size_t stream_chunk_size = 128 * 1024;
  std::chrono::milliseconds write_timeout{30'000};
  std::chrono::milliseconds stop_grace{10'000};
};

class PeerServer {
 public:
  // `catalog`, `metrics` and `clock` must outlive the server. Registers the
  // modelplane_peer_* metric families in `metrics` (so one registry holds one peer server).
  [[nodiscard]] static core::Result<std::unique_ptr<PeerServer>> Create(
      PeerServerOptions options, const BlobCatalog& catalog, core::MetricsRegistry& metrics,
      core::Logger logger, const core::Clock& clock);
  PeerServer(const PeerServer&) = delete;
  PeerServer& operator=(const PeerServer&) = delete;
  ~PeerServer();

  [[nodiscard]] std::uint16_t port() const;
  // "advertise_address:port" (FormatPeerEndpoint): what to advertise, and the token audience.
  [[nodiscard]] const std::string& endpoint() const;
  [[nodiscard]] std::size_t streams_in_flight() const;
  // Caps what all streams send together from now on (0: unlimited): the node agent lowers it
  // while the node serves inference.
  void SetUploadRate(std::uint64_t bytes_per_second);
  // Reads the certificate and key files again (a renewed peer certificate): new connections
  // use them; on failure the old stay in use.
  [[nodiscard]] core::Status ReloadTls();
  void Stop();

  class Impl;

 private:
  explicit PeerServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace modelplane::agent
