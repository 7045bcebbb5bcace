#include "core/kube/watch_stream.h"

#include <limits>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "core/kube/api_json_limits.h"
#include "core/kube/api_status.h"
#include "core/kube/kube_client.h"
#include "core/kube/kube_tls.h"
#include "core/text/percent_encoding.h"

namespace modelplane::core {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::redirect_error;
using asio::use_awaitable;
using asio::ip::tcp;

constexpr std::size_t kReadChunk = 256 << 10;
constexpr std::size_t kMaxErrorBody = 64 << 10;

Result<WatchEvent::Type> TypeFromName(std::string_view name) {
  if (name == "ADDED") return WatchEvent::Type::kAdded;
  if (name == "MODIFIED") return WatchEvent::Type::kModified;
  if (name == "DELETED") return WatchEvent::Type::kDeleted;
  if (name == "BOOKMARK") return WatchEvent::Type::kBookmark;
  if (name == "ERROR") return WatchEvent::Type::kError;
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown watch event type '" + std::string(name.substr(0, 32)) + "'");
}

Error NetworkError(const beast::error_code& error, std::string_view during) {
  if (error == beast::error::timeout) {
    return Error(ErrorCode::kDeadlineExceeded, "watch " + std::string(during) + " timed out");
  }
  return Error(ErrorCode::kUnavailable, "watch " + std::string(during) + ": " + error.message());
}

// Turns the chunks of the body into complete lines and hands each to the handler.
class LineSplitter {
 public:
  LineSplitter(std::size_t max_line, const WatchEventHandler& on_event)
      : max_line_(max_line), on_event_(on_event) {}

  Status Feed(std::string_view data) {
    while (!data.empty()) {
      const auto newline = data.find('\n');
      const auto take = newline == std::string_view::npos ? data.size() : newline;
      if (pending_.size() + take > max_line_) {
        return MakeError(ErrorCode::kResourceExhausted,
                         "watch event larger than " + std::to_string(max_line_) + " bytes");
      }
      pending_.append(data.substr(0, take));
      if (newline == std::string_view::npos) break;
      data.remove_prefix(newline + 1);
      if (auto delivered = Deliver(); !delivered) return delivered;
    }
    return {};
  }

 private:
  Status Deliver() {
    std::string line;
    line.swap(pending_);
    if (line.empty() || line == "\r") return {};
    auto event = ParseWatchEvent(line);
    if (!event) return std::unexpected(event.error());
    if (event->type == WatchEvent::Type::kError) {
      const int code = event->object.value("code", 0);
      return std::unexpected(
          ErrorFromApiResponse(code == 0 ? 500 : code, event->object.dump(), "watch ERROR event"));
    }
    return on_event_(std::move(*event));
  }

  const std::size_t max_line_;
  const WatchEventHandler& on_event_;
  std::string pending_;
};

std::string WatchTarget(const ResourceType& type, const std::string& ns,
                        const WatchOptions& options) {
  std::string target = type.Path(ns) + "?watch=1";
  if (options.allow_bookmarks) target += "&allowWatchBookmarks=true";
  if (!options.resource_version.empty()) {
    target += "&resourceVersion=" + PercentEncode(options.resource_version);
  }
  if (!options.label_selector.empty()) {
    target += "&labelSelector=" + PercentEncode(options.label_selector);
  }
  if (!options.field_selector.empty()) {
    target += "&fieldSelector=" + PercentEncode(options.field_selector);
  }
  target += "&timeoutSeconds=" + std::to_string(options.timeout_seconds);
  return target;
}

// Sends the request and streams the response through the splitter. Works on a plain
// tcp_stream or an ssl_stream over one.
template <typename Stream>
awaitable<Status> ExchangeOn(Stream& stream, http::request<http::empty_body> request,
                             const WatchOptions& options, const WatchEventHandler& on_event) {
  auto& socket = beast::get_lowest_layer(stream);
  beast::error_code error;
  socket.expires_after(options.connect_timeout);
  co_await http::async_write(stream, request, redirect_error(use_awaitable, error));
  if (error) co_return std::unexpected(NetworkError(error, "sending request"));

  // The server ends the watch after timeoutSeconds; a read silent for longer than that (plus
  // slack) means the connection died without a FIN.
  const auto read_deadline = std::chrono::seconds(options.timeout_seconds + 30);
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  // Unbounded: a watch body is endless by design (each event line is bounded instead). Not
  // boost::none, which Boost 1.74 mishandles for bodies with a Content-Length.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  socket.expires_after(read_deadline);
  co_await http::async_read_header(stream, buffer, parser, redirect_error(use_awaitable, error));
  if (error) co_return std::unexpected(NetworkError(error, "reading response header"));
  const int status = static_cast<int>(parser.get().result_int());

  std::vector<char> chunk(kReadChunk);
  std::string error_body;
  LineSplitter splitter(options.max_event_bytes, on_event);
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    socket.expires_after(read_deadline);
    co_await http::async_read_some(stream, buffer, parser, redirect_error(use_awaitable, error));
    if (error == http::error::need_buffer) error = {};
    if (error) co_return std::unexpected(NetworkError(error, "reading events"));
    const std::size_t got = chunk.size() - parser.get().body().size;
    const std::string_view data(chunk.data(), got);
    if (status != 200) {
      error_body.append(data.substr(0, kMaxErrorBody - std::min(kMaxErrorBody, error_body.size())));
      continue;
    }
    if (auto fed = splitter.Feed(data); !fed) co_return fed;
  }
  if (status != 200) co_return std::unexpected(ErrorFromApiResponse(status, error_body, "watch"));
  co_return Status{};
}

}  // namespace

Result<WatchEvent> ParseWatchEvent(std::string_view line) {
  auto parsed = ParseJsonDocument(line, kApiResponseJsonLimits);
  if (!parsed) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "watch event is not JSON: " + parsed.error().message());
  }
  nlohmann::json& document = *parsed;
  if (!document.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument, "watch event is not a JSON object");
  }
  if (!document.contains("type") || !document["type"].is_string() || !document.contains("object") ||
      !document["object"].is_object()) {
    return MakeError(ErrorCode::kInvalidArgument, "watch event lacks 'type' or 'object'");
  }
  auto type = TypeFromName(document["type"].get_ref<const std::string&>());
  if (!type) return std::unexpected(type.error());
  return WatchEvent{*type, std::move(document["object"])};
}

Result<std::unique_ptr<Watcher>> Watcher::Create(KubeConfig config) {
  auto address = ParseServerAddress(config.server);
  if (!address) return std::unexpected(address.error());
  try {
    asio::ssl::context probe(asio::ssl::context::tls_client);
    ConfigureKubeTls(config, probe);
  } catch (const std::exception& exception) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("kubeconfig TLS material is unusable: ") + exception.what());
  }
  return std::unique_ptr<Watcher>(new Watcher(std::move(config)));
}

Status Watcher::Watch(const ResourceType& type, const std::string& namespace_name,
                      const WatchOptions& options, const WatchEventHandler& on_event,
                      CancellationToken& cancel) const {
  auto address = ParseServerAddress(config_.server);
  if (!address) return std::unexpected(address.error());
  auto token = config_.token.Token();
  if (!token) return std::unexpected(token.error());

  http::request<http::empty_body> request(http::verb::get,
                                          WatchTarget(type, namespace_name, options), 11);
  request.set(http::field::host, address->host);
  request.set(http::field::accept, "application/json");
  request.set(http::field::user_agent, "modelplane-watch");
  if (!token->empty()) request.set(http::field::authorization, "Bearer " + *token);

  asio::io_context context;
  asio::ssl::context tls(asio::ssl::context::tls_client);
  try {
    ConfigureKubeTls(config_, tls);
  } catch (const std::exception& exception) {
    return MakeError(ErrorCode::kInvalidArgument, exception.what());
  }
  tls.set_verify_mode(config_.insecure_skip_tls_verify ? asio::ssl::verify_none
                                                       : asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> tls_stream(context, tls);
  beast::tcp_stream plain_stream(context);
  beast::tcp_stream& socket = address->tls ? beast::get_lowest_layer(tls_stream) : plain_stream;

  Status result = MakeError(ErrorCode::kInternal, "watch did not run");
  auto session = [&]() -> awaitable<Status> {
    beast::error_code error;
    tcp::resolver resolver(context);
    auto endpoints = co_await resolver.async_resolve(address->host, address->port,
                                                     redirect_error(use_awaitable, error));
    if (error) co_return std::unexpected(NetworkError(error, "resolving the API server"));
    socket.expires_after(options.connect_timeout);
    co_await socket.async_connect(endpoints, redirect_error(use_awaitable, error));
    if (error) co_return std::unexpected(NetworkError(error, "connecting"));
    if (!address->tls) co_return co_await ExchangeOn(plain_stream, request, options, on_event);

    const std::string& verify_name =
        config_.tls_server_name.empty() ? address->host : config_.tls_server_name;
    tls_stream.set_verify_callback(asio::ssl::host_name_verification(verify_name));
    beast::error_code ignored;
    const bool is_ip = !asio::ip::make_address(verify_name, ignored).is_unspecified() && !ignored;
    if (!is_ip) SSL_set_tlsext_host_name(tls_stream.native_handle(), verify_name.c_str());
    co_await tls_stream.async_handshake(asio::ssl::stream_base::client,
                                        redirect_error(use_awaitable, error));
    if (error) co_return std::unexpected(NetworkError(error, "TLS handshake"));
    co_return co_await ExchangeOn(tls_stream, request, options, on_event);
  };

  asio::co_spawn(context, session(), [&](const std::exception_ptr& failure, Status status) {
    if (failure) {
      result = MakeError(ErrorCode::kInternal, "watch coroutine threw");
    } else {
      result = std::move(status);
    }
  });
  {
    // Closing the socket from the io_context's own thread fails the pending read at once.
    ScopedCancellationCallback on_cancel(
        cancel, [&] { asio::post(context, [&] { socket.socket().close(); }); });
    context.run();
  }
  if (cancel.cancelled()) return MakeError(ErrorCode::kCancelled, "watch cancelled");
  return result;
}

}  // namespace modelplane::core
