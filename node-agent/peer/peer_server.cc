#include "node-agent/peer/peer_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <span>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/api/peer_identity.h"
#include "core/http/byte_range.h"
#include "core/http/http_server.h"
#include "core/io/unique_fd.h"
#include "core/pki/peer_ticket.h"
#include "core/throttle/byte_throttle.h"
#include "node-agent/peer/peer_protocol.h"
#include "node-agent/peer/peer_scope.h"

namespace modelplane::agent {
namespace {

namespace http = boost::beast::http;
using std::chrono::nanoseconds;

// The statuses the blob handler answers; each gets its requests_total child up front.
constexpr std::array<unsigned, 9> kCountedStatuses = {200, 206, 400, 401, 403, 404, 416, 500, 503};

// Throttle waits sleep at most this long before checking whether Stop() cut the stream.
constexpr nanoseconds kSleepSlice = std::chrono::milliseconds(20);

core::LogLevel ToLogLevel(core::HttpLogLevel level) {
  switch (level) {
    case core::HttpLogLevel::kDebug: return core::LogLevel::kDebug;
    case core::HttpLogLevel::kInfo: return core::LogLevel::kInfo;
    case core::HttpLogLevel::kWarning: return core::LogLevel::kWarn;
    case core::HttpLogLevel::kError: return core::LogLevel::kError;
  }
  return core::LogLevel::kInfo;
}

bool IsWildcardAddress(std::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

std::string_view AsView(boost::beast::string_view value) {
  return {value.data(), value.size()};
}

}  // namespace

class PeerServer::Impl {
 public:
  Impl(PeerServerOptions options, const BlobCatalog& catalog, core::Logger logger,
       const core::Clock& clock)
      : options_(std::move(options)),
        catalog_(catalog),
        logger_(std::move(logger)),
        clock_(clock),
        throttle_(options_.max_upload_bytes_per_second,
                  // 20 ms of rate, and at least one chunk so a chunk never waits for itself.
                  std::max<std::uint64_t>(options_.max_upload_bytes_per_second / 50,
                                          options_.stream_chunk_size),
                  clock),
        readers_(options_.max_readers, options_.reader_keep, clock) {
    if (options_.ticket_verifier) scope_.emplace(options_.ticket_verifier);
  }

  [[nodiscard]] core::Status RegisterMetrics(core::MetricsRegistry& metrics) {
    auto bytes = metrics.AddCounter({.name = "modelplane_peer_bytes_served_total",
                                     .help = "Blob bytes handed to peers (sendfile bodies count "
                                             "their whole range when they start)."});
    if (!bytes) return std::unexpected(bytes.error());
    auto requests = metrics.AddCounter({.name = "modelplane_peer_requests_total",
                                        .help = "Blob requests from peers, by HTTP status.",
                                        .label_names = {"code"},
                                        .max_children = 32});
    if (!requests) return std::unexpected(requests.error());
    auto streams = metrics.AddGauge(
        {.name = "modelplane_peer_streams_in_flight", .help = "Blob bodies being sent to peers."});
    if (!streams) return std::unexpected(streams.error());
    auto throttled = metrics.AddCounter(
        {.name = "modelplane_peer_throttled_seconds_total",
         .help = "Time blob bodies waited for the upload bandwidth cap, summed over streams."});
    if (!throttled) return std::unexpected(throttled.error());
    auto refusals = metrics.AddCounter(
        {.name = "modelplane_peer_scope_refusals_total",
         .help = "Blob requests refused by peer scope (403), by reason: a node without a "
                 "ticket for the blob (PeerTicketMissing after an upgrade, for instance).",
         .label_names = {"reason"},
         .max_children = kPeerScopeReasons.size()});
    if (!refusals) return std::unexpected(refusals.error());
    for (std::size_t i = 0; i < kPeerScopeReasons.size(); ++i) {
      auto child = (*refusals)->WithLabels({std::string(kPeerScopeReasons[i])});
      if (!child) return std::unexpected(child.error());
      scope_refusals_[i] = *child;
    }
    for (std::size_t i = 0; i < kCountedStatuses.size(); ++i) {
      auto child = (*requests)->WithLabels({std::to_string(kCountedStatuses[i])});
      if (!child) return std::unexpected(child.error());
      requests_by_status_[i] = *child;
    }
    auto bytes_child = (*bytes)->WithLabels({});
    auto streams_child = (*streams)->WithLabels({});
    auto throttled_child = (*throttled)->WithLabels({});
    if (!bytes_child || !streams_child || !throttled_child) {
      return core::MakeError(core::ErrorCode::kInternal, "peer metric children");
    }
    bytes_served_ = *bytes_child;
    streams_in_flight_gauge_ = *streams_child;
    throttled_seconds_ = *throttled_child;
    return core::Ok();
  }

  void SetUploadRate(std::uint64_t bytes_per_second) { throttle_.SetRate(bytes_per_second); }
  [[nodiscard]] core::Status ReloadTls() {
    if (!http_)
      return core::MakeError(core::ErrorCode::kInternal, "the peer server is not started");
    return http_->ReloadTls();
  }

  [[nodiscard]] core::Status Start() {
    core::ServerOptions server;
    server.address = options_.address;
    server.port = options_.port;
    server.threads =
        options_.threads > 0 ? options_.threads : static_cast<int>(options_.max_streams) + 2;
    server.body_limit = 4096;  // blob requests carry no body
    server.write_timeout = options_.write_timeout;
    server.stop_grace = options_.stop_grace;
    server.stream_chunk_size = options_.stream_chunk_size;
    server.use_sendfile = true;
    if (options_.tls) {
      server.tls = *options_.tls;
      server.tls->require_client_certificate = false;
    }
    server.log = [logger = logger_](core::HttpLogLevel level, std::string_view event,
                                    std::string_view fields) {
      logger.Log(ToLogLevel(level), event, {{"http", fields}});
    };
    core::Router router;
    router.HandlePrefix(http::verb::get, std::string(kPeerBlobPathPrefix),
                        [this](const core::ServerRequest& request) { return Serve(request); });
    auto created = core::HttpServer::Create(std::move(server), std::move(router));
    if (!created) return std::unexpected(created.error().Wrap("starting the peer server"));
    http_ = std::move(*created);
    // Only now is the port known (0 lets the kernel pick); requests that came in before are 503.
    const std::string& host =
        options_.advertise_address.empty() ? options_.address : options_.advertise_address;
    endpoint_ = FormatPeerEndpoint(host, http_->port());
    ready_.store(true);
    if (options_.token_key && IsWildcardAddress(host)) {
      logger_.Warn("peer_endpoint_unroutable",
                   {{"endpoint", endpoint_},
                    {"note",
                     "tokens are signed for the endpoint clients dial, and none dials a "
                     "wildcard address: set the advertise address"}});
    }
    if (!options_.tls) {
      logger_.Warn("insecure_plain_http_enabled",
                   {{"address", options_.address},
                    {"port", static_cast<std::uint64_t>(http_->port())},
                    {"note", "tokens and blob bytes travel unencrypted; for loopback benchmarks"}});
    }
    logger_.Info("peer_server_started",
                 {{"address", options_.address},
                  {"endpoint", endpoint_},
                  {"port", static_cast<std::uint64_t>(http_->port())},
                  {"tls", options_.tls.has_value()},
                  {"mutual_tls", options_.tls && !options_.tls->client_ca_file.empty()},
                  {"tokens", options_.token_key.has_value()},
                  {"peer_scope", scope_.has_value()},
                  {"max_upload_bytes_per_second", options_.max_upload_bytes_per_second},
                  {"max_streams", static_cast<std::uint64_t>(options_.max_streams)}});
    return core::Ok();
  }

  void Stop() {
    if (stopping_.exchange(true)) return;
    const auto cut_at = clock_.Now() + options_.stop_grace;
    cut_at_ns_.store(cut_at.time_since_epoch().count());
    const std::size_t in_flight = streams_.load();
    if (http_) http_->Stop();
    logger_.Info("peer_server_stopped",
                 {{"streams_in_flight_at_stop", static_cast<std::uint64_t>(in_flight)}});
  }

  [[nodiscard]] std::uint16_t port() const { return http_->port(); }
  [[nodiscard]] const std::string& endpoint() const { return endpoint_; }
  [[nodiscard]] std::size_t streams_in_flight() const { return streams_.load(); }

 private:
  class BlobBody;

  // True once Stop()'s grace is over: bodies still running end at their next chunk.
  [[nodiscard]] bool Cut() const {
    const auto cut_at = cut_at_ns_.load();
    return cut_at != 0 && clock_.Now().time_since_epoch().count() >= cut_at;
  }

  void Count(http::status status) {
    const auto code = static_cast<unsigned>(status);
    for (std::size_t i = 0; i < kCountedStatuses.size(); ++i) {
      if (kCountedStatuses[i] == code) requests_by_status_[i]->Increment();
    }
  }

  core::ServerResponse Answer(const core::ServerRequest& request, http::status status,
                              std::string_view reason) {
    Count(status);
    logger_.Info("peer_request_refused", {{"remote", request.remote_endpoint},
                                          {"path", request.path},
                                          {"status", static_cast<unsigned>(status)},
                                          {"reason", reason}});
    core::ServerResponse response = core::ServerResponse::Text(status, fmt::format("{}\n", reason));
    if (status == http::status::unauthorized && options_.token_key) {
      response.headers.set(http::field::www_authenticate, std::string(kPeerTokenScheme));
    }
    if (status == http::status::service_unavailable) {
      response.headers.set(http::field::retry_after, std::to_string(options_.retry_after.count()));
    }
    return response;
  }

  // Who sent the request, or why it may not read blobs.
  [[nodiscard]] core::Result<std::string> Authenticate(const core::ServerRequest& request) const {
    if (request.peer_certificate) return "certificate:" + request.peer_certificate->subject;
    if (options_.token_key) {
      const auto header = request.headers.find(http::field::authorization);
      const std::string_view value =
          header == request.headers.end() ? std::string_view() : AsView(header->value());
      const std::string_view method = request.method == http::verb::head ? "HEAD" : "GET";
      auto verified =
          VerifyPeerToken(*options_.token_key, value,
                          {.audience = endpoint_, .method = method, .path = request.path},
                          clock_.WallNow(), options_.token_policy);
      if (!verified) return std::unexpected(verified.error());
      return "token:" + options_.token_key->id();
    }
    return core::MakeError(core::ErrorCode::kUnauthenticated,
                           "no client certificate from the peer CA");
  }

  // Ok, or why the node that asks may not read `blob` (peer_scope.h).
  [[nodiscard]] core::Status CheckScope(const core::ServerRequest& request,
                                        const core::Sha256Bytes& blob) const {
    std::string node;
    if (request.peer_certificate) {
      for (const std::string& name : request.peer_certificate->dns_names) {
        node = core::api::NodeOfPeerIdentity(name);
        if (!node.empty()) break;
      }
    }
    const auto header = [&](std::string_view name) {
      const auto found = request.headers.find(boost::beast::string_view(name.data(), name.size()));
      return found == request.headers.end() ? std::string_view() : AsView(found->value());
    };
    return scope_->Check({.node = node,
                          .ticket = header(core::kPeerTicketHeader),
                          .proof = header(core::kPeerProofHeader),
                          .blob = blob},
                         clock_.WallNow());
  }

  core::ServerResponse Serve(const core::ServerRequest& request);

  const PeerServerOptions options_;
  const BlobCatalog& catalog_;
  const core::Logger logger_;
  const core::Clock& clock_;
  core::ByteThrottle throttle_;
  ReaderAdmission readers_;
  std::optional<PeerScope> scope_;  // set when the server checks tickets
  std::atomic<std::size_t> streams_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> cut_at_ns_{0};
  // Written once in Start() before ready_ is set; handlers read it only after seeing ready_.
  std::string endpoint_;
  std::atomic<bool> ready_{false};
  std::array<std::optional<core::Counter>, kCountedStatuses.size()> requests_by_status_;
  std::optional<core::Counter> bytes_served_;
  std::optional<core::Gauge> streams_in_flight_gauge_;
  std::optional<core::Counter> throttled_seconds_;
  std::array<std::optional<core::Counter>, kPeerScopeReasons.size()> scope_refusals_;
  // Last: destroyed (and stopped) first, while everything its handlers use still exists.
  std::unique_ptr<core::HttpServer> http_;
};

// One blob's bytes for one response. Holds a stream slot (GET only) until the server is done
// with the body, whichever way the response ended.
class PeerServer::Impl::BlobBody final : public core::BodySource {
 public:
  // `reader` holds a place in the server's ReaderAdmission when the body holds a slot.
  BlobBody(Impl& server, core::UniqueFd fd, std::uint64_t size, bool holds_slot, bool zero_copy,
           std::string reader)
      : server_(server),
        fd_(std::move(fd)),
        size_(size),
        holds_slot_(holds_slot),
        zero_copy_(zero_copy),
        reader_(std::move(reader)) {}
  BlobBody(const BlobBody&) = delete;
  BlobBody& operator=(const BlobBody&) = delete;
  ~BlobBody() override {
    if (holds_slot_) {
      server_.streams_.fetch_sub(1);
      server_.streams_in_flight_gauge_->Decrement();
      server_.readers_.Finished(reader_);
    }
  }

  [[nodiscard]] std::uint64_t Size() const override { return size_; }
  // Only unthrottled bodies offer their descriptor: sendfile cannot pause between chunks.
  [[nodiscard]] int FileDescriptor() const override { return zero_copy_ ? fd_.get() : -1; }

  [[nodiscard]] core::Result<std::size_t> ReadAt(std::uint64_t offset,
                                                 std::span<std::byte> out) override {
    if (offset >= size_) return 0;
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), size_ - offset));
    if (auto waited = Pay(want); !waited) return std::unexpected(waited.error());
    std::size_t done = 0;
    while (done < want) {
      const ssize_t count =
          ::pread(fd_.get(), out.data() + done, want - done, static_cast<off_t>(offset + done));
      if (count < 0 && errno == EINTR) continue;
      if (count < 0) {
        return core::MakeError(
            core::ErrorCode::kIo,
            fmt::format("reading blob: {}", std::system_category().message(errno)));
      }
      if (count == 0) break;  // shorter than announced; the server reports the short body
      done += static_cast<std::size_t>(count);
    }
    server_.bytes_served_->Increment(static_cast<double>(done));
    return done;
  }

 private:
  // Waits until the throttle allows `bytes`, in slices so Stop() can cut the stream.
  [[nodiscard]] core::Status Pay(std::size_t bytes) {
    if (server_.Cut()) {
      return core::MakeError(core::ErrorCode::kCancelled, "peer server stopped");
    }
    const nanoseconds wait = server_.throttle_.Reserve(bytes);
    if (wait <= nanoseconds(0)) return core::Ok();
    server_.throttled_seconds_->Increment(std::chrono::duration<double>(wait).count());
    const auto until = std::chrono::steady_clock::now() + wait;
    for (auto now = std::chrono::steady_clock::now(); now < until;
         now = std::chrono::steady_clock::now()) {
      if (server_.Cut()) {
        return core::MakeError(core::ErrorCode::kCancelled, "peer server stopped");
      }
      std::this_thread::sleep_for(std::min<nanoseconds>(until - now, kSleepSlice));
    }
    return core::Ok();
  }

  Impl& server_;
  const core::UniqueFd fd_;
  const std::uint64_t size_;
  const bool holds_slot_;
  const bool zero_copy_;
  const std::string reader_;
};

core::ServerResponse PeerServer::Impl::Serve(const core::ServerRequest& request) {
  if (!ready_.load()) return Answer(request, http::status::service_unavailable, "starting");
  // Credentials first: an unauthenticated client learns nothing, not even which digests exist.
  auto who = Authenticate(request);
  if (!who) return Answer(request, http::status::unauthorized, who.error().message());

  const std::string_view name = std::string_view(request.path).substr(kPeerBlobPathPrefix.size());
  auto digest = core::ParseDigest(name);
  if (!digest || core::FormatDigest(*digest) != name) {
    return Answer(request, http::status::bad_request,
                  "expected /v1/blobs/sha256:<64 lower-case hex>");
  }
  if (scope_) {
    if (auto allowed = CheckScope(request, *digest); !allowed) {
      const std::string& message = allowed.error().message();
      for (std::size_t i = 0; i < kPeerScopeReasons.size(); ++i) {
        if (message.starts_with(kPeerScopeReasons[i])) scope_refusals_[i]->Increment();
      }
      return Answer(request, http::status::forbidden, message);
    }
  }
  if (stopping_.load()) return Answer(request, http::status::service_unavailable, "stopping");

  const bool head = request.method == http::verb::head;
  const std::string reader =
      ReaderOf(request.remote_endpoint,
               request.peer_certificate ? &request.peer_certificate->subject : nullptr);
  if (!head) {
    std::size_t current = streams_.load();
    do {
      if (current >= options_.max_streams) {
        return Answer(request, http::status::service_unavailable, "stream limit reached");
      }
    } while (!streams_.compare_exchange_weak(current, current + 1));
    // The reader's place second: a request turned away for streams must not hold a place.
    if (!readers_.TryAdmit(reader)) {
      streams_.fetch_sub(1);
      return Answer(request, http::status::service_unavailable, "reader limit reached");
    }
    streams_in_flight_gauge_->Increment();
  }
  // From here the slot and the reader's place belong to the body, or are given back right away
  // on an early answer.
  auto release_slot = [&] {
    if (head) return;
    streams_.fetch_sub(1);
    streams_in_flight_gauge_->Decrement();
    readers_.Finished(reader);
  };

  const std::optional<VerifiedBlob> blob = catalog_.FindVerifiedBlob(*digest);
  if (!blob) {
    release_slot();
    Count(http::status::not_found);
    logger_.Debug("peer_blob_not_found", {{"remote", request.remote_endpoint}, {"blob", name}});
    return core::ServerResponse::Text(http::status::not_found, "blob not found\n");
  }
  core::UniqueFd fd(::open(blob->path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd.valid() || ::fstat(fd.get(), &info) != 0 ||
      static_cast<std::uint64_t>(info.st_size) != blob->size) {
    // Collected between lookup and open, or not what the catalog says: not servable as verified.
    release_slot();
    Count(http::status::not_found);
    logger_.Warn("peer_blob_unreadable",
                 {{"blob", name},
                  {"path", blob->path.string()},
                  {"error", fd.valid() ? "size differs from catalog"
                                       : std::system_category().message(errno)}});
    return core::ServerResponse::Text(http::status::not_found, "blob not found\n");
  }

  // The server resolves the Range with the same function; resolving here too lets the handler
  // count the real status and bytes.
  core::ByteRange range{0, blob->size == 0 ? 0 : blob->size - 1};
  std::uint64_t length = blob->size;
  http::status status = http::status::ok;
  if (const auto header = request.headers.find(http::field::range);
      header != request.headers.end()) {
    const core::RangeDecision decision = core::ResolveRange(AsView(header->value()), blob->size);
    if (decision.kind == core::RangeDecision::Kind::kUnsatisfiable) {
      release_slot();
      core::ServerResponse refusal =
          Answer(request, http::status::range_not_satisfiable, "range not satisfiable");
      refusal.headers.set(http::field::content_range, fmt::format("bytes */{}", blob->size));
      return refusal;
    }
    if (decision.kind == core::RangeDecision::Kind::kPartial) {
      status = http::status::partial_content;
      range = decision.range;
      length = range.Length();
    }
  }
  Count(status);
  const bool zero_copy = throttle_.unlimited() && !options_.tls;
  if (zero_copy && !head) bytes_served_->Increment(static_cast<double>(length));
  logger_.Debug("peer_blob_served", {{"remote", request.remote_endpoint},
                                     {"client", *who},
                                     {"blob", name},
                                     {"first", range.first},
                                     {"length", length},
                                     {"head", head}});
  return core::ServerResponse::Stream(
      std::make_unique<BlobBody>(*this, std::move(fd), blob->size, !head, zero_copy, reader));
}

core::Result<std::unique_ptr<PeerServer>> PeerServer::Create(PeerServerOptions options,
                                                             const BlobCatalog& catalog,
                                                             core::MetricsRegistry& metrics,
                                                             core::Logger logger,
                                                             const core::Clock& clock) {
  const bool mutual_tls = options.tls && !options.tls->client_ca_file.empty();
  if (!options.tls && !options.allow_plain_http) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "peer server needs TLS, or allow_plain_http for loopback benchmarks");
  }
  if (!mutual_tls && !options.token_key) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "peer server needs a way to authenticate peers: a client CA (mutual "
                           "TLS) or a token key");
  }
  if (options.max_streams == 0 || options.stream_chunk_size == 0) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "max_streams and stream_chunk_size must be positive");
  }
  auto impl = std::make_unique<Impl>(std::move(options), catalog, std::move(logger), clock);
  if (auto registered = impl->RegisterMetrics(metrics); !registered) {
    return std::unexpected(registered.error().Wrap("peer server metrics"));
  }
  if (auto started = impl->Start(); !started) return std::unexpected(started.error());
  return std::unique_ptr<PeerServer>(new PeerServer(std::move(impl)));
}

PeerServer::PeerServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PeerServer::~PeerServer() {
  Stop();
}

void PeerServer::SetUploadRate(std::uint64_t bytes_per_second) {
  impl_->SetUploadRate(bytes_per_second);
}

core::Status PeerServer::ReloadTls() {
  return impl_->ReloadTls();
}

std::uint16_t PeerServer::port() const {
  return impl_->port();
}

const std::string& PeerServer::endpoint() const {
  return impl_->endpoint();
}

std::size_t PeerServer::streams_in_flight() const {
  return impl_->streams_in_flight();
}

void PeerServer::Stop() {
  impl_->Stop();
}

}  // namespace modelplane::agent
