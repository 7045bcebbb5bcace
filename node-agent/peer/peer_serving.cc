#include "node-agent/peer/peer_serving.h"

#include <algorithm>

namespace modelplane::agent {

PeerServing::PeerServing(PeerServingOptions options, const BlobCatalog& catalog,
                         core::MetricsRegistry& metrics, const core::Logger& logger,
                         const core::Clock& clock)
    : options_(std::move(options)),
      catalog_(catalog),
      metrics_(metrics),
      logger_(logger),
      clock_(clock),
      upload_rate_(options_.server.max_upload_bytes_per_second) {}

PeerServing::~PeerServing() {
  Stop();
}

core::Status PeerServing::Start(std::function<void(const std::string& endpoint)> on_serving) {
  on_serving_ = std::move(on_serving);
  if (options_.requester == nullptr) {
    return Serve(options_.server.tls ? options_.server.tls->certificate_chain_file : "");
  }
  keeper_ = std::thread([this] { KeepCertificate(); });
  return core::Ok();
}

void PeerServing::Stop() {
  stop_.Cancel();
  if (keeper_.joinable()) keeper_.join();
  std::unique_ptr<PeerServer> server;
  {
    const std::lock_guard lock(mutex_);
    server = std::move(server_);
  }
  if (server) server->Stop();
}

void PeerServing::SetUploadRate(std::uint64_t bytes_per_second) {
  const std::lock_guard lock(mutex_);
  upload_rate_ = bytes_per_second;
  if (server_) server_->SetUploadRate(bytes_per_second);
}

std::string PeerServing::certificate_file() const {
  const std::lock_guard lock(mutex_);
  if (options_.requester == nullptr) {
    return options_.server.tls ? options_.server.tls->certificate_chain_file : "";
  }
  return certificate_ ? certificate_->file : "";
}

std::string PeerServing::endpoint() const {
  const std::lock_guard lock(mutex_);
  return server_ ? server_->endpoint() : "";
}

core::Status PeerServing::Serve(const std::string& certificate_file) {
  PeerServerOptions options = options_.server;
  if (options_.requester != nullptr) {
    options.tls->certificate_chain_file = certificate_file;
    options.tls->private_key_file = certificate_file;
  }
  std::string endpoint;
  {
    const std::lock_guard lock(mutex_);
    options.max_upload_bytes_per_second = upload_rate_;
    auto server = PeerServer::Create(std::move(options), catalog_, metrics_, logger_, clock_);
    if (!server) return std::unexpected(server.error());
    server_ = std::move(*server);
    endpoint = server_->endpoint();
  }
  logger_.Info("peer_server_listening", {{"endpoint", endpoint}});
  if (on_serving_) on_serving_(endpoint);
  return core::Ok();
}

void PeerServing::KeepCertificate() {
  while (!stop_.cancelled()) {
    auto certificate = options_.requester->Ensure(stop_);
    std::chrono::nanoseconds wait = options_.retry_interval;
    if (!certificate) {
      if (stop_.cancelled()) return;
      logger_.Warn(
          "peer_certificate_unavailable",
          {{"error", certificate.error().ToString()},
           {"effect", "no peer serving, peers read with tokens only, until it comes"},
           {"retry_in_seconds", static_cast<std::int64_t>(options_.retry_interval.count())}});
    } else {
      bool serving = false;
      bool renewed = false;
      {
        const std::lock_guard lock(mutex_);
        serving = server_ != nullptr;
        renewed = !certificate_ || certificate_->not_after != certificate->not_after;
        certificate_ = *certificate;
      }
      if (!serving) {
        if (auto status = Serve(certificate->file); !status) {
          logger_.Error("peer_server_failed", {{"error", status.error().ToString()}});
        }
      } else if (renewed) {
        const std::lock_guard lock(mutex_);
        if (auto status = server_->ReloadTls(); !status) {
          logger_.Warn("peer_certificate_reload_failed", {{"error", status.error().ToString()}});
        } else {
          logger_.Info("peer_certificate_reloaded", {});
        }
      }
      const auto until_renewal = certificate->renew_at() - clock_.WallNow();
      wait = std::max<std::chrono::nanoseconds>(until_renewal, std::chrono::seconds(1));
    }
    if (!stop_.SleepFor(clock_, wait)) return;
  }
}

}  // namespace modelplane::agent
