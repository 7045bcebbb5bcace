#include "core/http/client_connection.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <type_traits>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/socket.h>

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
using std::chrono::milliseconds;

// Transport failures: timeouts and resets may succeed on a new attempt; a TLS protocol or
// verification failure will not.
Error TransportError(std::string_view what, const error_code& error) {
  if (error == beast::error::timeout) {
    return Error(ErrorCode::kDeadlineExceeded, fmt::format("{}: timed out", what), true);
  }
  if (error.category() == net::error::get_ssl_category()) {
    return Error(ErrorCode::kUnauthenticated, fmt::format("{}: TLS: {}", what, error.message()),
                 false);
  }
  return Error(ErrorCode::kUnavailable, fmt::format("{}: {}", what, error.message()), true);
}

// Runs one coroutine on `io_context` to completion on the calling thread.
template <class T>
T RunToCompletion(net::io_context& io_context, net::awaitable<T> operation) {
  std::optional<T> result;
  net::co_spawn(
      io_context, std::move(operation), [&result](const std::exception_ptr& failure, T value) {
        if (!failure) {
          result.emplace(std::move(value));
          return;
        }
        try {
          std::rethrow_exception(failure);
        } catch (const std::exception& exception) {
          result.emplace(std::unexpected(Error(ErrorCode::kInternal, exception.what(), false)));
        } catch (...) {
          result.emplace(std::unexpected(Error(ErrorCode::kInternal, "unknown exception", false)));
        }
      });
  io_context.restart();
  io_context.run();
  if (!result) return std::unexpected(Error(ErrorCode::kInternal, "operation did not finish"));
  return std::move(*result);
}

template <class Stream>
class BasicConnection final : public ClientConnection {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  BasicConnection(ConnectionLimits limits, net::ssl::context* tls, std::string tls_name)
      : limits_(limits), tls_name_(std::move(tls_name)), stream_(MakeStream(io_context_, tls)) {}

  Status Open(const std::string& host, std::uint16_t port, milliseconds timeout) {
    return RunToCompletion(io_context_, DoConnect(host, port, timeout));
  }

  Result<ResponseHead> Start(const http::request<http::string_body>& request, bool head_only,
                             milliseconds timeout) override {
    return RunToCompletion(io_context_, DoStart(request, head_only, timeout));
  }

  Status ReadBody(const BodySink& sink, milliseconds timeout, std::uint64_t& delivered,
                  std::span<std::byte> landing) override {
    return RunToCompletion(io_context_, DoReadBody(sink, timeout, delivered, landing));
  }

  bool LooksAlive() override {
    if (buffer_.size() > 0) return false;
    char byte = 0;
    const ssize_t peeked =
        ::recv(Lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  bool Reusable() const override { return body_done_ && keep_alive_ && !broken_; }
  bool NothingReceived() const override { return nothing_received_; }

 private:
  static Stream MakeStream(net::io_context& io_context, net::ssl::context* tls) {
    if constexpr (kTls) {
      return Stream(io_context, *tls);
    } else {
      (void)tls;
      return Stream(io_context);
    }
  }

  PlainStream& Lowest() { return beast::get_lowest_layer(stream_); }

  // The resolved endpoints the address policy allows, in the resolver's order; kAddressDenied
  // when it allows none. The refused addresses are in the message (for the log).
  Result<std::vector<tcp::endpoint>> AllowedEndpoints(
      const std::string& host, std::uint16_t port,
      const tcp::resolver::results_type& resolved) const {
    std::vector<tcp::endpoint> allowed;
    std::vector<std::string> refused;
    for (const auto& entry : resolved) {
      const tcp::endpoint endpoint = entry.endpoint();
      if (limits_.addresses == nullptr || limits_.addresses->Allows(endpoint.address())) {
        allowed.push_back(endpoint);
      } else {
        refused.push_back(endpoint.address().to_string());
      }
    }
    if (allowed.empty()) {
      return std::unexpected(
          Error(ErrorCode::kAddressDenied,
                fmt::format("refused to connect to {}:{}: it resolved only to special-purpose "
                            "addresses the address policy does not allow ({})",
                            host, port, fmt::join(refused, ", ")),
                false));
    }
    return allowed;
  }

  net::awaitable<Status> DoConnect(std::string host, std::uint16_t port, milliseconds timeout) {
    error_code error;
    const std::string where = fmt::format("{}:{}", host, port);
    tcp::resolver resolver(io_context_);
    const auto resolved =
        co_await resolver.async_resolve(host, std::to_string(port), Redirect(error));
    if (error) co_return std::unexpected(TransportError("resolving " + host, error));
    // Resolved once: the addresses checked are the addresses connected to, so a second DNS
    // answer cannot slip an unchecked one in between.
    auto endpoints = AllowedEndpoints(host, port, resolved);
    if (!endpoints) co_return std::unexpected(endpoints.error());
    Lowest().expires_after(timeout);
    co_await Lowest().async_connect(*endpoints, Redirect(error));
    if (error) co_return std::unexpected(TransportError("connecting to " + where, error));
    Lowest().socket().set_option(tcp::no_delay(true), error);
    if constexpr (kTls) {
      if (auto status =
              SetClientVerifyHost(stream_.native_handle(), tls_name_.empty() ? host : tls_name_);
          !status) {
        co_return status;
      }
      Lowest().expires_after(timeout);
      co_await stream_.async_handshake(net::ssl::stream_base::client, Redirect(error));
      if (error) co_return std::unexpected(TransportError("TLS handshake with " + where, error));
    }
    Lowest().expires_never();
    co_return Ok();
  }

  net::awaitable<Result<ResponseHead>> DoStart(const http::request<http::string_body>& request,
                                               bool head_only, milliseconds timeout) {
    error_code error;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(limits_.header_limit));
    // Beast 1.74 mishandles body_limit(none); the sink bounds what callers keep.
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    parser_->skip(head_only);
    body_done_ = false;
    nothing_received_ = true;
    keep_alive_ = false;
    Lowest().expires_after(timeout);
    co_await http::async_write(stream_, request, Redirect(error));
    if (error) {
      broken_ = true;
      co_return std::unexpected(TransportError("sending request", error));
    }
    Lowest().expires_after(timeout);
    co_await http::async_read_header(stream_, buffer_, *parser_, Redirect(error));
    nothing_received_ = !parser_->got_some() && buffer_.size() == 0;
    if (error) {
      broken_ = true;
      co_return std::unexpected(TransportError("reading response head", error));
    }
    Lowest().expires_never();
    const auto& message = parser_->get();
    keep_alive_ = message.keep_alive();
    body_done_ = parser_->is_done();
    ResponseHead head;
    head.status = message.result_int();
    head.headers = static_cast<const http::fields&>(message);
    co_return head;
  }

  net::awaitable<Status> DoReadBody(const BodySink& sink, milliseconds timeout,
                                    std::uint64_t& delivered, std::span<std::byte> landing) {
    if (body_done_) co_return Ok();
    if (body_buffer_.empty()) body_buffer_.resize(limits_.read_buffer_size);
    auto deliver = [&](const void* data, std::size_t size) -> Status {
      auto status = sink(std::span(static_cast<const std::byte*>(data), size));
      if (!status)
        broken_ = true;
      else
        delivered += size;
      return status;
    };
    auto& parser = *parser_;
    error_code error;
    if (!parser.chunked() && parser.content_length()) {
      // Known length: read straight into the caller's landing span while it has room, else
      // into our buffer; no parser copy in between.
      std::uint64_t remaining = *parser.content_length();
      std::size_t landed = 0;  // bytes of `landing` used
      auto next_piece = [&](std::size_t limit) -> std::span<std::byte> {
        if (landed < landing.size()) {
          const std::size_t room = landing.size() - landed;
          return landing.subspan(landed, std::min(room, limit));
        }
        return std::span(body_buffer_.data(), std::min(body_buffer_.size(), limit));
      };
      auto take = [&](std::span<std::byte> piece, std::size_t count) -> Status {
        if (landed < landing.size()) landed += count;
        remaining -= count;
        return deliver(piece.data(), count);
      };
      // Body bytes that came in with the head, in as many pieces as the landing span's end
      // makes them.
      while (buffer_.size() > 0 && remaining > 0) {
        const std::span<std::byte> piece = next_piece(
            static_cast<std::size_t>(std::min<std::uint64_t>(buffer_.size(), remaining)));
        std::memcpy(piece.data(), buffer_.data().data(), piece.size());
        buffer_.consume(piece.size());
        if (auto status = take(piece, piece.size()); !status) co_return status;
      }
      while (remaining > 0) {
        const std::span<std::byte> piece = next_piece(static_cast<std::size_t>(
            std::min<std::uint64_t>(remaining, std::numeric_limits<std::size_t>::max())));
        Lowest().expires_after(timeout);
        const std::size_t count = co_await stream_.async_read_some(
            net::buffer(piece.data(), piece.size()), Redirect(error));
        if (error) {
          broken_ = true;
          co_return std::unexpected(
              TransportError(fmt::format("reading body ({} bytes short)", remaining), error));
        }
        if (auto status = take(piece, count); !status) co_return status;
      }
    } else {
      // Chunked, or delimited by the connection closing: the parser frames it.
      while (!parser.is_done()) {
        parser.get().body().data = body_buffer_.data();
        parser.get().body().size = body_buffer_.size();
        Lowest().expires_after(timeout);
        co_await http::async_read_some(stream_, buffer_, parser, Redirect(error));
        if (error == http::error::need_buffer) error = {};
        if (error) {
          broken_ = true;
          co_return std::unexpected(TransportError("reading body", error));
        }
        const std::size_t count = body_buffer_.size() - parser.get().body().size;
        if (count == 0) continue;
        if (auto status = deliver(body_buffer_.data(), count); !status) co_return status;
      }
    }
    Lowest().expires_never();
    body_done_ = true;
    if (buffer_.size() > 0) broken_ = true;  // bytes nobody asked for: do not reuse
    co_return Ok();
  }

  const ConnectionLimits limits_;
  const std::string tls_name_;  // the name the server's certificate must carry; empty: the host
  net::io_context io_context_{1};
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::buffer_body>> parser_;
  std::vector<std::byte> body_buffer_;
  bool keep_alive_ = false;
  bool body_done_ = false;
  bool broken_ = false;
  bool nothing_received_ = true;
};

template <class Stream>
Result<std::unique_ptr<ClientConnection>> OpenConnection(const std::string& host,
                                                         std::uint16_t port, net::ssl::context* tls,
                                                         const std::string& tls_name,
                                                         milliseconds timeout,
                                                         ConnectionLimits limits) {
  auto connection = std::make_unique<BasicConnection<Stream>>(limits, tls, tls_name);
  if (auto status = connection->Open(host, port, timeout); !status) {
    return std::unexpected(status.error());
  }
  return std::unique_ptr<ClientConnection>(std::move(connection));
}

}  // namespace

Result<std::unique_ptr<ClientConnection>> ClientConnection::Connect(
    const std::string& host, std::uint16_t port, net::ssl::context* tls,
    const std::string& tls_name, milliseconds timeout, ConnectionLimits limits) {
  if (tls != nullptr) return OpenConnection<TlsStream>(host, port, tls, tls_name, timeout, limits);
  return OpenConnection<PlainStream>(host, port, nullptr, tls_name, timeout, limits);
}

}  // namespace modelplane::core::http_internal
