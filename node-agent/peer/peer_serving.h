// PeerServing: the agent's peer server and the certificate it serves with, kept current.
//
// With a certificate from files (the chart's shared peerTlsSecret) or none (tokens over plain
// HTTP in tests), the server starts at once and a failure stops the agent, as before. With
// per-node certificates (a PeerCertificateRequester), getting the certificate needs the
// operator's signer, and the agent must not wait for it: its ModelCache, status and staging
// from sources go on meanwhile. A background thread then asks for the certificate, starts the
// server when it comes (reporting the endpoint, so status advertises it only from then on),
// renews it when two thirds of its lifetime have passed and reloads the server with it.
// Thread safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/log/logger.h"
#include "core/metrics/metrics_registry.h"
#include "node-agent/peer/peer_certificate_requester.h"
#include "node-agent/peer/peer_server.h"
#include "node-agent/store/blob_catalog.h"

namespace modelplane::agent {

struct PeerServingOptions {
  // Everything but the certificate files when `requester` is set (they come from it).
  PeerServerOptions server;
  PeerCertificateRequester* requester = nullptr;  // per-node certificates; must outlive this
  // Retried after this long when the signer did not answer or refused.
  std::chrono::seconds retry_interval{30};
};

class PeerServing {
 public:
  // `catalog`, `metrics`, `logger` and `clock` must outlive this.
  PeerServing(PeerServingOptions options, const BlobCatalog& catalog,
              core::MetricsRegistry& metrics, const core::Logger& logger, const core::Clock& clock);
  PeerServing(const PeerServing&) = delete;
  PeerServing& operator=(const PeerServing&) = delete;
  ~PeerServing();  // Stop()

  // Without a requester: starts the server now (its error is the agent's). With one: starts the
  // thread that gets the certificate, serves with it and renews it (at once when a valid one is
  // on disk). `on_serving` gets the endpoint once the server listens (from that thread).
  [[nodiscard]] core::Status Start(std::function<void(const std::string& endpoint)> on_serving);
  void Stop();

  // Applied to the server now or when it starts.
  void SetUploadRate(std::uint64_t bytes_per_second);
  // The key-and-certificate file clients present to other peers; "" until there is one.
  [[nodiscard]] std::string certificate_file() const;
  [[nodiscard]] std::string endpoint() const;

 private:
  [[nodiscard]] core::Status Serve(const std::string& certificate_file);
  void KeepCertificate();

  PeerServingOptions options_;
  std::function<void(const std::string& endpoint)> on_serving_;
  const BlobCatalog& catalog_;
  core::MetricsRegistry& metrics_;
  const core::Logger logger_;
  const core::Clock& clock_;
  mutable std::mutex mutex_;
  std::unique_ptr<PeerServer> server_;
  std::optional<PeerCertificate> certificate_;
  std::uint64_t upload_rate_ = 0;
  core::CancellationToken stop_;
  std::thread keeper_;
};

}  // namespace modelplane::agent
