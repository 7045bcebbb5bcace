// A synchronous, thread-safe HTTP/1.1 client (Boost.Beast) with a keep-alive pool per origin,
// TLS with CA and hostname verification, optional client certificates, per-request connect and
// per-read deadlines, Range requests, streaming bodies and bounded retries.
//
// Status policy: a 2xx answer is success; every other status becomes an Error (code from
// ErrorCodeForHttpStatus, message "HTTP <status> from <url>: <start of the body>", the wait
// from Retry-After or else a RateLimit header's t, the server's X-Error-Code as its
// server_reason). Redirects are
// not followed: a request with `redirects_as_answers` gets 301/302/303/307/308 back as an answer
// (headers only) and decides itself where it may go (redirect_follower.h).
//
// Retry policy: connect failures, timeouts, resets and 429/502/503/504 are retried with jittered
// exponential backoff (Retry-After honoured) up to RetryPolicy::max_attempts; 4xx never. The
// waits between attempts run on the request's clock and end when its cancel token fires. A
// request that fails on a reused pooled connection before any response byte arrived (the server
// closed it while idle) is repeated once at once on a new connection, without counting.
//
// Streaming: FetchStream retries only while the sink has received nothing. Once a byte went to
// the sink a failure is returned as is (still marked retryable when the cause was), and the sink
// is the record of how much arrived: callers resume with a Range request from there. Requests
// with a body are retried too; callers must only send idempotent requests (GET, HEAD, PUT).
//
// Thread safety: every method may be called from many threads at once; each call uses its own
// connection, so calls do not serialise behind each other except on the pool bounds.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "core/backoff/backoff.h"
#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/http/address_policy.h"
#include "core/http/byte_range.h"
#include "core/http/client_connection.h"
#include "core/http/connection_pool.h"
#include "core/http/http_log.h"
#include "core/http/retry_policy.h"
#include "core/http/tls_context.h"
#include "core/http/url.h"

namespace modelplane::core {

struct ClientOptions {
  // For https:// URLs; unset means the system trust store and no client certificate.
  std::optional<TlsClientOptions> tls;
  std::size_t max_connections_per_origin = 16;
  std::size_t max_idle_per_origin = 8;
  std::chrono::milliseconds max_idle_time{30'000};   // idle pooled connections older are closed
  std::chrono::milliseconds connect_timeout{5'000};  // connect + TLS handshake, and pool waits
  std::chrono::milliseconds read_timeout{30'000};    // each write and each read
  std::size_t header_limit = 64 * 1024;
  // One socket read, and one sink call, at most this much. Measured on loopback (docs/http.md):
  // 64 KiB costs ~40% less CPU per byte than 1 MiB, whose buffer no longer fits in L2.
  std::size_t stream_buffer_size = 64 * 1024;
  std::size_t error_body_limit = 16 * 1024;  // how much of a non-2xx body is kept
  RetryPolicy retry;
  // Which addresses connections may use (address_policy.h); unset: any. Set for sources a
  // tenant names (the node agent's object stores and HTTP origins), so a host name cannot be
  // resolved to the node's loopback or the metadata service. A refusal is kAddressDenied, not
  // retried.
  std::optional<AddressPolicy> address_policy;
  std::string user_agent = "modelplane";
  HttpLogFunction log;
};

struct ClientRequest {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string url;
  boost::beast::http::fields headers;
  std::string body;
  // Range: bytes=first-last (or first- when last is unset). The answer must be a 206 whose
  // Content-Range starts at `first`, else the call fails: a server that ignored the Range would
  // otherwise hand the caller the wrong bytes.
  std::optional<std::uint64_t> range_first;
  std::optional<std::uint64_t> range_last;
  std::optional<std::chrono::milliseconds> connect_timeout;  // overrides ClientOptions
  std::optional<std::chrono::milliseconds> read_timeout;
  // Called once per attempt when the response head has arrived: the caller's time to first
  // byte. Called on the calling thread, before the body is read.
  std::function<void()> on_head;
  // Ends the wait before a retry at once (the call fails with kCancelled); may be null. An
  // attempt under way ends at its own deadlines, or when the sink refuses more.
  CancellationToken* cancel = nullptr;
  // The caller's clock, which times the waits between attempts; null: the system's.
  const Clock* clock = nullptr;
  // A redirect status is answered as a response with its headers and no body (the body is read
  // and dropped), not as an error; a Range request's answer is then not checked for a range.
  bool redirects_as_answers = false;
};

// basic_fields' move assignment is noexcept; see ServerResponse in server_response.h.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct ClientResponse {
  unsigned status = 0;
  boost::beast::http::fields headers;
  std::string body;
};

// basic_fields' move assignment is noexcept; see ServerResponse in server_response.h.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct StreamResponse {
  unsigned status = 0;
  boost::beast::http::fields headers;
  std::uint64_t bytes_delivered = 0;
  std::optional<ContentRange> content_range;  // for 206 answers
};

struct ClientStats {
  std::uint64_t connections_opened = 0;
  std::uint64_t connections_reused = 0;
  std::uint64_t stale_discarded = 0;
  std::uint64_t retries = 0;
};

class HttpClient {
 public:
  [[nodiscard]] static Result<std::unique_ptr<HttpClient>> Create(ClientOptions options);
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;
  ~HttpClient();

  // Buffers the body; a body over `body_limit` fails with kResourceExhausted.
  [[nodiscard]] Result<ClientResponse> Fetch(const ClientRequest& request,
                                             std::size_t body_limit = 1024 * 1024);

  // Streams the body into `sink` as it arrives; memory stays at stream_buffer_size. With a
  // `landing` span, a body of known length is read straight into it (from its start; a retry
  // starts over there) and the sink receives spans inside it: a caller that wants the body in
  // its own memory lends it here and skips the copy.
  [[nodiscard]] Result<StreamResponse> FetchStream(const ClientRequest& request,
                                                   const BodySink& sink,
                                                   std::span<std::byte> landing = {});

  [[nodiscard]] ClientStats stats();

 private:
  struct Attempt;
  HttpClient(ClientOptions options, std::unique_ptr<boost::asio::ssl::context> tls);
  // The retry loop shared by both calls. `restart` is called before every attempt after the
  // first; when null the call is streaming and may retry only while nothing was delivered.
  [[nodiscard]] Result<StreamResponse> Execute(const ClientRequest& request, const BodySink& sink,
                                               const std::function<void()>& restart,
                                               std::span<std::byte> landing = {});
  [[nodiscard]] Result<StreamResponse> TryOnce(const ClientRequest& request, const Url& url,
                                               const BodySink& sink, std::span<std::byte> landing,
                                               bool fresh_connection, Attempt& attempt);
  [[nodiscard]] std::chrono::milliseconds NextBackoff(int failed_attempts);
  void Log(HttpLogLevel level, std::string_view event, std::string_view fields) const;

  // The TLS context for https URLs, made on first use when the options name no trust store
  // of their own: parsing the system's (about 140 certificates) took 20 ms, a fixed cost of
  // every `fetch` command whose sources are plain http.
  [[nodiscard]] Result<boost::asio::ssl::context*> TlsContext();

  const ClientOptions options_;
  std::once_flag tls_once_;
  std::unique_ptr<boost::asio::ssl::context> tls_;
  std::optional<Error> tls_error_;
  http_internal::ConnectionPool pool_;
  std::mutex random_mutex_;
  std::mt19937_64 random_;
  std::atomic<std::uint64_t> retries_{0};
  const SystemClock system_clock_;
};

}  // namespace modelplane::core
