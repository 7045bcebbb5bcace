#include "core/http/server_connection.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <fmt/format.h>
#include <sys/sendfile.h>

#include "core/http/byte_range.h"
#include "core/http/redirect_error.h"
#include "core/http/tls_context.h"

namespace modelplane::core::http_internal {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// The first read of a request is small: it only waits for the client to start talking.
constexpr std::size_t kFirstReadSize = 4096;
// After an error response, unread request bytes are drained (bounded) so the kernel does not
// reset the connection and destroy the response before the client reads it.
constexpr std::size_t kLingerDrainLimit = 1024 * 1024;
constexpr std::chrono::milliseconds kLingerTimeout{1000};
// Largest piece handed to one sendfile call; the kernel sends what fits in the socket buffer.
constexpr std::uint64_t kSendFileMax = 16 * 1024 * 1024;

bool IsParseError(const error_code& error) {
  return error.category() == http::make_error_code(http::error::bad_target).category() &&
         error != http::error::end_of_stream && error != http::error::partial_message;
}

ServerResponse ErrorResponse(http::status status, std::string_view text) {
  return ServerResponse::Text(status, std::string(text) + "\n");
}

// One of ServerOptions::max_concurrent_bodies, held from the end of a request's headers until
// its response is written, so the body and what the handler builds from it are counted.
class BodySlot {
 public:
  static std::optional<BodySlot> TryAcquire(std::atomic<std::size_t>& in_flight, std::size_t max) {
    if (in_flight.fetch_add(1) >= max) {
      in_flight.fetch_sub(1);
      return std::nullopt;
    }
    return BodySlot(in_flight);
  }
  BodySlot(BodySlot&& other) noexcept : in_flight_(std::exchange(other.in_flight_, nullptr)) {}
  BodySlot& operator=(BodySlot&& other) noexcept {
    if (this != &other) {
      Release();
      in_flight_ = std::exchange(other.in_flight_, nullptr);
    }
    return *this;
  }
  BodySlot(const BodySlot&) = delete;
  BodySlot& operator=(const BodySlot&) = delete;
  ~BodySlot() { Release(); }

 private:
  explicit BodySlot(std::atomic<std::size_t>& in_flight) : in_flight_(&in_flight) {}
  void Release() {
    if (in_flight_ != nullptr) in_flight_->fetch_sub(1);
    in_flight_ = nullptr;
  }
  std::atomic<std::size_t>* in_flight_;
};

template <class Stream>
class Connection final : public ConnectionControl,
                         public std::enable_shared_from_this<Connection<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  template <class... StreamArgs>
  Connection(ServerShared& shared, std::uint64_t id, std::string remote, StreamArgs&&... args)
      : shared_(shared),
        id_(id),
        remote_(std::move(remote)),
        stream_(std::forward<StreamArgs>(args)...) {}

  void RequestStop(bool force) override {
    net::post(stream_.get_executor(), [self = this->shared_from_this(), force] {
      self->stop_requested_ = true;
      if (force || self->idle_) {
        error_code ignored;
        beast::get_lowest_layer(self->stream_).socket().close(ignored);
      }
    });
  }

  static void Start(std::shared_ptr<Connection> self) {
    auto executor = self->stream_.get_executor();
    net::co_spawn(executor, Run(std::move(self)), net::detached);
  }

 private:
  // Unregisters however the coroutine ends, including destruction with the io_context.
  struct RegistryGuard {
    ServerShared& shared;
    std::uint64_t id;
    ~RegistryGuard() { shared.registry.Unregister(id); }
  };

  static net::awaitable<void> Run(std::shared_ptr<Connection> self) {
    RegistryGuard guard{self->shared_, self->id_};
    try {
      co_await self->Serve();
    } catch (const std::exception& exception) {
      self->shared_.Log(HttpLogLevel::kError, "connection_failed",
                        fmt::format("remote={} error=\"{}\"", self->remote_, exception.what()));
    }
  }

  PlainStream& Lowest() { return beast::get_lowest_layer(stream_); }
  const ServerOptions& options() const { return shared_.options; }

  net::awaitable<void> Serve() {
    error_code error;
    if constexpr (kTls) {
      Lowest().expires_after(options().handshake_timeout);
      co_await stream_.async_handshake(net::ssl::stream_base::server, Redirect(error));
      if (error) {
        shared_.Log(HttpLogLevel::kInfo, "tls_handshake_failed",
                    fmt::format("remote={} error=\"{}\"", remote_, error.message()));
        co_return;
      }
      peer_ = GetPeerCertificate(stream_.native_handle());
    }
    beast::flat_buffer buffer;
    for (;;) {
      idle_ = true;
      if (stop_requested_ || shared_.stopping) break;
      if (buffer.size() == 0) {
        Lowest().expires_after(options().idle_timeout);
        const std::size_t count =
            co_await stream_.async_read_some(buffer.prepare(kFirstReadSize), Redirect(error));
        if (error) co_return;  // closed by the peer, idle too long, or stopped
        buffer.commit(count);
      }
      idle_ = false;

      // Declared before the request and response, so it is released after both are gone.
      std::optional<BodySlot> body_slot;
      http::request_parser<http::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(options().header_limit));
      parser.body_limit(options().body_limit);
      Lowest().expires_after(options().header_timeout);
      co_await http::async_read_header(stream_, buffer, parser, Redirect(error));
      if (!error && !parser.is_done() && options().max_concurrent_bodies > 0) {
        body_slot = BodySlot::TryAcquire(shared_.bodies_in_flight, options().max_concurrent_bodies);
        if (!body_slot) {
          co_await RefuseBusy();
          co_return;
        }
      }
      if (!error && !parser.is_done()) {
        Lowest().expires_after(options().body_timeout);
        co_await http::async_read(stream_, buffer, parser, Redirect(error));
      }
      if (error) {
        co_await Reject(error);
        co_return;
      }
      ++shared_.requests;
      bool keep_alive = parser.get().keep_alive();
      ServerRequest request = MakeRequest(parser.release());
      ServerResponse response = Dispatch(request);
      keep_alive = keep_alive && !stop_requested_ && !shared_.stopping;
      if (!co_await Write(request, response, keep_alive)) co_return;
      if (!keep_alive) break;
    }
    co_await Close(false);
  }

  // A request that could not be read: answer what can be answered, then close.
  net::awaitable<void> Reject(const error_code& error) {
    std::optional<ServerResponse> response;
    if (error == http::error::header_limit) {
      response = ErrorResponse(http::status::request_header_fields_too_large, "header too large");
    } else if (error == http::error::body_limit) {
      response = ErrorResponse(http::status::payload_too_large, "body too large");
    } else if (IsParseError(error)) {
      response = ErrorResponse(http::status::bad_request, "malformed request");
    }
    shared_.Log(HttpLogLevel::kInfo, "request_rejected",
                fmt::format("remote={} error=\"{}\" status={}", remote_, error.message(),
                            response ? static_cast<unsigned>(response->status) : 0U));
    if (!response) co_return;  // timeouts (slowloris) and resets get no answer
    ServerRequest request;
    if (co_await Write(request, *response, false)) co_await Close(true);
  }

  // Too many bodies in flight: answer before reading this one, then close (its unread body
  // leaves the connection unusable).
  net::awaitable<void> RefuseBusy() {
    ++shared_.refused_busy;
    shared_.Log(HttpLogLevel::kWarning, "request_refused",
                fmt::format("remote={} reason=too_many_bodies_in_flight limit={} status=503",
                            remote_, options().max_concurrent_bodies));
    ServerResponse response =
        ErrorResponse(http::status::service_unavailable, "too many requests in flight");
    response.headers.set(http::field::retry_after, "1");
    ServerRequest request;
    if (co_await Write(request, response, false)) co_await Close(true);
  }

  ServerRequest MakeRequest(http::request<http::string_body> message) {
    ServerRequest request;
    request.method = message.method();
    request.target = std::string(message.target());
    const std::size_t question = request.target.find('?');
    request.path = request.target.substr(0, question);
    if (question != std::string::npos) request.query = request.target.substr(question + 1);
    request.body = std::move(message.body());
    request.headers = std::move(static_cast<http::fields&>(message));
    request.remote_endpoint = remote_;
    request.peer_certificate = peer_;
    return request;
  }

  ServerResponse Dispatch(const ServerRequest& request) {
    const Router::Match match = shared_.router.Find(request.method, request.path);
    switch (match.kind) {
      case Router::Match::Kind::kNotFound:
        return ErrorResponse(http::status::not_found, "not found");
      case Router::Match::Kind::kMethodNotAllowed: {
        ServerResponse response =
            ErrorResponse(http::status::method_not_allowed, "method not allowed");
        response.headers.set(http::field::allow, match.allow);
        return response;
      }
      case Router::Match::Kind::kFound: break;
    }
    try {
      return (*match.handler)(request);
    } catch (const std::exception& exception) {
      shared_.Log(HttpLogLevel::kError, "handler_failed",
                  fmt::format("path={} error=\"{}\"", request.path, exception.what()));
    } catch (...) {
      shared_.Log(HttpLogLevel::kError, "handler_failed", "path=" + request.path);
    }
    return ErrorResponse(http::status::internal_server_error, "internal error");
  }

  template <class Body>
  static void CopyHeaders(const ServerResponse& from, http::response<Body>& to) {
    for (const auto& field : from.headers) to.insert(field.name_string(), field.value());
  }

  // Returns false when the connection must close without the graceful shutdown.
  net::awaitable<bool> Write(const ServerRequest& request, ServerResponse& response,
                             bool keep_alive) {
    const bool head = request.method == http::verb::head;
    if (response.stream) co_return co_await WriteStream(request, response, keep_alive, head);
    error_code error;
    http::response<http::string_body> message{response.status, 11};
    CopyHeaders(response, message);
    message.keep_alive(keep_alive);
    Lowest().expires_after(options().write_timeout);
    if (head) {
      message.content_length(response.body.size());
      http::response_serializer<http::string_body> serializer(message);
      co_await http::async_write_header(stream_, serializer, Redirect(error));
    } else {
      message.body() = std::move(response.body);
      message.prepare_payload();
      co_await http::async_write(stream_, message, Redirect(error));
    }
    co_return !error;
  }

  net::awaitable<bool> WriteStream(const ServerRequest& request, ServerResponse& response,
                                   bool keep_alive, bool head) {
    BodySource& source = *response.stream;
    const std::uint64_t size = source.Size();
    ByteRange range{0, size == 0 ? 0 : size - 1};
    std::uint64_t length = size;
    http::status status = response.status;
    const auto range_header = request.headers.find(http::field::range);
    if (status == http::status::ok && range_header != request.headers.end()) {
      const RangeDecision decision = ResolveRange(
          std::string_view(range_header->value().data(), range_header->value().size()), size);
      if (decision.kind == RangeDecision::Kind::kUnsatisfiable) {
        ServerResponse refusal =
            ErrorResponse(http::status::range_not_satisfiable, "range not satisfiable");
        refusal.headers.set(http::field::content_range, fmt::format("bytes */{}", size));
        co_return co_await Write(request, refusal, keep_alive);
      }
      if (decision.kind == RangeDecision::Kind::kPartial) {
        status = http::status::partial_content;
        range = decision.range;
        length = range.Length();
        response.headers.set(http::field::content_range, FormatContentRange(range, size));
      }
    }
    response.headers.set(http::field::accept_ranges, "bytes");
    http::response<http::empty_body> message{status, 11};
    CopyHeaders(response, message);
    message.content_length(length);
    message.keep_alive(keep_alive);
    error_code error;
    http::response_serializer<http::empty_body> serializer(message);
    Lowest().expires_after(options().write_timeout);
    co_await http::async_write_header(stream_, serializer, Redirect(error));
    if (error || head || length == 0) co_return !error;
    if constexpr (!kTls) {
      if (const int fd = source.FileDescriptor(); fd >= 0 && options().use_sendfile) {
        co_return co_await SendFile(fd, range.first, length, request.path);
      }
    }

    std::vector<std::byte> chunk(
        static_cast<std::size_t>(std::min<std::uint64_t>(options().stream_chunk_size, length)));
    std::uint64_t offset = range.first;
    std::uint64_t remaining = length;
    while (remaining > 0) {
      const std::size_t want =
          static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), remaining));
      auto count = source.ReadAt(offset, std::span(chunk.data(), want));
      if (!count || *count == 0) {
        // The status line is gone; the only honest signal left is a short body.
        shared_.Log(HttpLogLevel::kError, "stream_read_failed",
                    fmt::format("path={} offset={} error=\"{}\"", request.path, offset,
                                count ? "unexpected end" : count.error().ToString()));
        co_return false;
      }
      Lowest().expires_after(options().write_timeout);
      co_await net::async_write(stream_, net::buffer(chunk.data(), *count), Redirect(error));
      if (error) co_return false;
      offset += *count;
      remaining -= *count;
    }
    co_return true;
  }

  // Zero-copy body for plain connections: the kernel moves page-cache pages to the socket, so
  // the server spends no CPU copying blob bytes. Each wait for socket space has the write
  // deadline, enforced by a watchdog timer that cancels the wait.
  net::awaitable<bool> SendFile(int fd, std::uint64_t offset, std::uint64_t length,
                                const std::string& path) {
    tcp::socket& socket = Lowest().socket();
    error_code error;
    socket.native_non_blocking(true, error);
    if (error) co_return false;
    net::steady_timer watchdog(stream_.get_executor());
    auto position = static_cast<off_t>(offset);
    std::uint64_t remaining = length;
    while (remaining > 0) {
      const ssize_t sent = ::sendfile(socket.native_handle(), fd, &position,
                                      static_cast<std::size_t>(std::min(remaining, kSendFileMax)));
      if (sent > 0) {
        remaining -= static_cast<std::uint64_t>(sent);
        continue;
      }
      if (sent < 0 && errno == EINTR) continue;
      if (sent == 0 || errno != EAGAIN) {
        shared_.Log(HttpLogLevel::kError, "sendfile_failed",
                    fmt::format("path={} offset={} error=\"{}\"", path, position,
                                sent == 0 ? "file shorter than announced"
                                          : std::system_category().message(errno)));
        co_return false;
      }
      watchdog.expires_after(options().write_timeout);
      watchdog.async_wait([self = this->shared_from_this()](const error_code& expired) {
        if (expired) return;  // cancelled: the socket became writable in time
        error_code ignored;
        beast::get_lowest_layer(self->stream_).socket().cancel(ignored);
      });
      co_await socket.async_wait(tcp::socket::wait_write, Redirect(error));
      watchdog.cancel();
      if (error) co_return false;
    }
    co_return true;
  }

  // Half-closes, then (after an error response) drains what the client still sends, bounded.
  net::awaitable<void> Close(bool linger) {
    error_code error;
    if constexpr (kTls) {
      Lowest().expires_after(kLingerTimeout);
      co_await stream_.async_shutdown(Redirect(error));
    } else {
      Lowest().socket().shutdown(tcp::socket::shutdown_send, error);
      if (!linger || error) co_return;
      std::vector<char> sink(64 * 1024);
      std::size_t drained = 0;
      Lowest().expires_after(kLingerTimeout);
      while (drained < kLingerDrainLimit) {
        drained += co_await stream_.async_read_some(net::buffer(sink), Redirect(error));
        if (error) break;
      }
    }
  }

  ServerShared& shared_;
  const std::uint64_t id_;
  const std::string remote_;
  Stream stream_;
  std::optional<PeerCertificate> peer_;
  // Touched only on the connection's strand.
  bool idle_ = true;
  bool stop_requested_ = false;
};

}  // namespace

void StartConnection(tcp::socket socket, ServerShared& shared, std::uint64_t id) {
  error_code error;
  socket.set_option(tcp::no_delay(true), error);
  std::string remote = "unknown";
  if (const auto endpoint = socket.remote_endpoint(error); !error) {
    remote = fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
  }
  auto start = [&](auto connection) {
    if (!shared.registry.Register(id, connection)) {
      shared.Log(HttpLogLevel::kWarning, "connection_refused",
                 fmt::format("remote={} reason=stopping_or_full", remote));
      return;  // the connection and its socket close here
    }
    std::decay_t<decltype(*connection)>::Start(std::move(connection));
  };
  if (boost::asio::ssl::context* tls = shared.CurrentTls()) {
    start(std::make_shared<Connection<TlsStream>>(shared, id, remote, std::move(socket), *tls));
  } else {
    start(std::make_shared<Connection<PlainStream>>(shared, id, remote, std::move(socket)));
  }
}

}  // namespace modelplane::core::http_internal
