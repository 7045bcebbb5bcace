#include "core/http/http_client.h"

#include <algorithm>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <fmt/format.h>

#include "core/http/http_status_error.h"

namespace modelplane::core {
namespace {

namespace http = boost::beast::http;
using std::chrono::milliseconds;
const std::string kNoServerName;  // verify the host dialed

// How much of an error body goes into the Error message.
constexpr std::size_t kErrorDetailLength = 200;

std::string_view AsStd(boost::beast::string_view value) {
  return {value.data(), value.size()};
}

}  // namespace

struct HttpClient::Attempt {
  bool stale = false;        // failed on a reused connection before any response byte
  bool sink_failed = false;  // the caller's sink refused data: never retried
  std::optional<milliseconds> retry_after;
  std::uint64_t delivered = 0;
};

Result<std::unique_ptr<HttpClient>> HttpClient::Create(ClientOptions options) {
  if (options.max_connections_per_origin == 0 || options.stream_buffer_size == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "max_connections_per_origin and stream_buffer_size must be positive");
  }
  // TLS options of the caller's own are checked here, so a bad CA or key fails at once.
  std::unique_ptr<boost::asio::ssl::context> tls;
  if (options.tls) {
    auto made = MakeClientTlsContext(*options.tls);
    if (!made) return std::unexpected(made.error().Wrap("configuring client TLS"));
    tls = std::move(*made);
  }
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(options), std::move(tls)));
}

Result<boost::asio::ssl::context*> HttpClient::TlsContext() {
  std::call_once(tls_once_, [this] {
    if (tls_) return;
    auto made = MakeClientTlsContext(TlsClientOptions{});
    if (made) {
      tls_ = std::move(*made);
    } else {
      tls_error_ = made.error().Wrap("configuring client TLS");
    }
  });
  if (tls_error_) return std::unexpected(*tls_error_);
  return tls_.get();
}

HttpClient::HttpClient(ClientOptions options, std::unique_ptr<boost::asio::ssl::context> tls)
    : options_(std::move(options)),
      tls_(std::move(tls)),
      pool_(http_internal::PoolLimits{options_.max_connections_per_origin,
                                      options_.max_idle_per_origin, options_.max_idle_time}),
      random_(std::random_device{}()) {}

HttpClient::~HttpClient() = default;

void HttpClient::Log(HttpLogLevel level, std::string_view event, std::string_view fields) const {
  if (options_.log) options_.log(level, event, fields);
}

Result<ClientResponse> HttpClient::Fetch(const ClientRequest& request, std::size_t body_limit) {
  std::string body;
  const BodySink sink = [&body, body_limit](std::span<const std::byte> data) -> Status {
    if (body.size() + data.size() > body_limit) {
      return MakeError(ErrorCode::kResourceExhausted,
                       fmt::format("response body over the {} byte limit", body_limit));
    }
    body.append(reinterpret_cast<const char*>(data.data()), data.size());
    return Ok();
  };
  auto response = Execute(request, sink, [&body] { body.clear(); });
  if (!response) return std::unexpected(response.error());
  return ClientResponse{response->status, std::move(response->headers), std::move(body)};
}

Result<StreamResponse> HttpClient::FetchStream(const ClientRequest& request, const BodySink& sink,
                                               std::span<std::byte> landing) {
  return Execute(request, sink, nullptr, landing);
}

ClientStats HttpClient::stats() {
  const http_internal::PoolStats pool = pool_.stats();
  return {pool.connections_opened, pool.connections_reused, pool.stale_discarded, retries_.load()};
}

milliseconds HttpClient::NextBackoff(int failed_attempts) {
  const ExponentialBackoff backoff{.initial = options_.retry.initial_backoff,
                                   .max = options_.retry.max_backoff};
  std::lock_guard lock(random_mutex_);
  return std::chrono::duration_cast<milliseconds>(backoff.Jittered(failed_attempts, random_));
}

Result<StreamResponse> HttpClient::Execute(const ClientRequest& request, const BodySink& sink,
                                           const std::function<void()>& restart,
                                           std::span<std::byte> landing) {
  auto url = Url::Parse(request.url);
  if (!url) return std::unexpected(url.error());
  const int max_attempts = std::max(1, options_.retry.max_attempts);
  bool stale_retried = false;
  bool fresh_connection = false;
  for (int attempt_number = 1;;) {
    Attempt attempt;
    auto result = TryOnce(request, *url, sink, landing, fresh_connection, attempt);
    if (result) return result;
    const Error& error = result.error();
    if (attempt.sink_failed) return result;
    if (attempt.delivered > 0 && !restart) {
      return std::unexpected(Error(
          error.code(),
          fmt::format("{} (after {} bytes went to the sink)", error.message(), attempt.delivered),
          error.retryable()));
    }
    if (restart) restart();
    if (attempt.stale && !stale_retried) {
      // The server closed the idle connection as we reused it: not a failure of the request.
      stale_retried = true;
      fresh_connection = true;
      Log(HttpLogLevel::kDebug, "stale_connection_replaced",
          fmt::format("url={} error=\"{}\"", request.url, error.message()));
      continue;
    }
    if (!error.retryable() || attempt_number >= max_attempts) {
      if (attempt_number == 1) return result;
      return std::unexpected(error.Wrap(fmt::format("after {} attempts", attempt_number)));
    }
    milliseconds wait = NextBackoff(attempt_number);
    if (attempt.retry_after) {
      if (*attempt.retry_after > options_.retry.max_retry_after) return result;
      wait = *attempt.retry_after;
    }
    Log(HttpLogLevel::kInfo, "request_retried",
        fmt::format("url={} attempt={} wait_ms={} error=\"{}\"", request.url, attempt_number + 1,
                    wait.count(), error.ToString()));
    ++retries_;
    const Clock& clock = request.clock != nullptr ? *request.clock : system_clock_;
    CancellationToken never_cancelled;
    CancellationToken& cancel = request.cancel != nullptr ? *request.cancel : never_cancelled;
    if (!cancel.SleepFor(clock, wait)) {
      return std::unexpected(Error(
          ErrorCode::kCancelled,
          fmt::format("cancelled while waiting to retry {}: {}", request.url, error.message())));
    }
    ++attempt_number;
  }
}

Result<StreamResponse> HttpClient::TryOnce(const ClientRequest& request, const Url& url,
                                           const BodySink& sink, std::span<std::byte> landing,
                                           bool fresh_connection, Attempt& attempt) {
  const milliseconds connect_timeout = request.connect_timeout.value_or(options_.connect_timeout);
  const milliseconds read_timeout = request.read_timeout.value_or(options_.read_timeout);
  boost::asio::ssl::context* tls = nullptr;
  if (url.tls) {
    auto context = TlsContext();
    if (!context) return std::unexpected(context.error());
    tls = *context;
  }
  const std::string& tls_server_name = options_.tls ? options_.tls->server_name : kNoServerName;
  const http_internal::ConnectionLimits limits{
      options_.header_limit, options_.stream_buffer_size,
      options_.address_policy ? &*options_.address_policy : nullptr};
  auto lease = pool_.Acquire(
      url.Origin(),
      [&] {
        return http_internal::ClientConnection::Connect(url.host, url.port, tls, tls_server_name,
                                                        connect_timeout, limits);
      },
      connect_timeout, fresh_connection);
  if (!lease) return std::unexpected(lease.error());

  http::request<http::string_body> message{request.method, url.target, 11};
  message.set(http::field::host, url.HostHeader());
  message.set(http::field::user_agent, options_.user_agent);
  for (const auto& field : request.headers) message.insert(field.name_string(), field.value());
  if (request.range_first) {
    message.set(http::field::range, FormatRangeHeader(*request.range_first, request.range_last));
  }
  message.body() = request.body;
  message.prepare_payload();
  message.keep_alive(true);

  auto head = (*lease)->Start(message, request.method == http::verb::head, read_timeout);
  if (!head) {
    attempt.stale = lease->reused() && (*lease)->NothingReceived();
    return std::unexpected(head.error());
  }
  if (request.on_head) request.on_head();

  if (request.redirects_as_answers && IsRedirectStatus(head->status)) {
    std::uint64_t ignored = 0;
    const std::size_t limit = options_.error_body_limit;
    std::size_t dropped = 0;
    const BodySink drop = [&dropped, limit](std::span<const std::byte> data) -> Status {
      dropped += data.size();
      if (dropped > limit)
        return MakeError(ErrorCode::kResourceExhausted, "redirect body too large");
      return Ok();
    };
    // As for an error body: one that is too large or broken only costs the connection.
    (void)(*lease)->ReadBody(drop, read_timeout, ignored);
    StreamResponse redirect;
    redirect.status = head->status;
    redirect.headers = std::move(head->headers);
    return redirect;
  }
  if (head->status < 200 || head->status >= 300) {
    std::string detail;
    std::uint64_t ignored = 0;
    const std::size_t limit = options_.error_body_limit;
    const BodySink keep_start = [&detail, limit](std::span<const std::byte> data) -> Status {
      if (detail.size() + data.size() > limit) {
        return MakeError(ErrorCode::kResourceExhausted, "error body too large");
      }
      detail.append(reinterpret_cast<const char*>(data.data()), data.size());
      return Ok();
    };
    // A large or broken error body only costs the connection (it is not reused).
    (void)(*lease)->ReadBody(keep_start, read_timeout, ignored);
    if (detail.size() > kErrorDetailLength) detail.resize(kErrorDetailLength);
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == '\r')) detail.pop_back();
    if (const auto retry_after = head->headers.find(http::field::retry_after);
        retry_after != head->headers.end()) {
      attempt.retry_after = ParseRetryAfter(AsStd(retry_after->value()));
    }
    if (const auto rate_limit = head->headers.find("RateLimit");
        !attempt.retry_after && rate_limit != head->headers.end()) {
      attempt.retry_after = ParseRateLimitReset(AsStd(rate_limit->value()));
    }
    std::string server_reason;
    if (const auto reason = head->headers.find("X-Error-Code"); reason != head->headers.end()) {
      server_reason = std::string(AsStd(reason->value()).substr(0, kErrorDetailLength));
    }
    return std::unexpected(HttpStatusError(head->status, request.url, detail)
                               .WithRetryAfter(attempt.retry_after)
                               .WithServerReason(std::move(server_reason)));
  }

  StreamResponse response;
  response.status = head->status;
  if (request.range_first) {
    const auto content_range = head->headers.find(http::field::content_range);
    std::optional<ContentRange> parsed;
    if (content_range != head->headers.end()) {
      parsed = ParseContentRange(AsStd(content_range->value()));
    }
    if (head->status != 206 || !parsed || parsed->range.first != *request.range_first ||
        (request.range_last && parsed->range.last > *request.range_last)) {
      return std::unexpected(Error(
          ErrorCode::kUnavailable,
          fmt::format("{} answered HTTP {} without the requested range", request.url, head->status),
          false));
    }
    response.content_range = parsed;
  }
  response.headers = std::move(head->headers);

  const BodySink counted = [&](std::span<const std::byte> data) {
    auto status = sink(data);
    if (!status) attempt.sink_failed = true;
    return status;
  };
  auto status = (*lease)->ReadBody(counted, read_timeout, attempt.delivered, landing);
  response.bytes_delivered = attempt.delivered;
  if (!status) return std::unexpected(status.error().Wrap(request.url));
  return response;
}

}  // namespace modelplane::core
