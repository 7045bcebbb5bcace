// Internal to the HTTP client: one HTTP/1.1 connection (plain or TLS) with its own io_context,
// driven synchronously by the calling thread; every connect, write and read has a deadline.
//
// A connection lives in the pool between requests and is used by one thread at a time (the pool
// hands it out exclusively). Its io_context runs only inside a call, on the caller's thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "core/error/error.h"
#include "core/http/address_policy.h"

namespace modelplane::core {

// Receives a response body piece by piece; an error aborts the transfer.
using BodySink = std::function<Status(std::span<const std::byte>)>;

namespace http_internal {

struct ResponseHead {
  unsigned status = 0;
  boost::beast::http::fields headers;
};

struct ConnectionLimits {
  std::size_t header_limit = 64 * 1024;
  std::size_t read_buffer_size = 64 * 1024;
  // Which resolved addresses Connect may use (it connects only to those); null: any. Must
  // outlive the Connect call.
  const AddressPolicy* addresses = nullptr;
};

class ClientConnection {
 public:
  virtual ~ClientConnection() = default;

  // Resolves, connects and (with `tls`) handshakes, verifying the server for `tls_name` (SNI and
  // the certificate's name), or for `host` when `tls_name` is empty.
  [[nodiscard]] static Result<std::unique_ptr<ClientConnection>> Connect(
      const std::string& host, std::uint16_t port, boost::asio::ssl::context* tls,
      const std::string& tls_name, std::chrono::milliseconds timeout, ConnectionLimits limits);

  // Writes the request and reads the response head; `timeout` bounds each write and read.
  [[nodiscard]] virtual Result<ResponseHead> Start(
      const boost::beast::http::request<boost::beast::http::string_body>& request, bool head_only,
      std::chrono::milliseconds timeout) = 0;

  // Reads the body of the response Start returned into `sink`; `timeout` bounds each read, so a
  // stalled body fails. `delivered` counts the bytes the sink accepted, also on failure.
  // With a `landing` span and a Content-Length, the body is read straight into `landing` (from
  // its start, as far as it reaches) and the sink receives spans inside it, so a sink that
  // lent its own memory need not copy.
  [[nodiscard]] virtual Status ReadBody(const BodySink& sink, std::chrono::milliseconds timeout,
                                        std::uint64_t& delivered,
                                        std::span<std::byte> landing = {}) = 0;

  // Cheap check before reuse: false when the peer closed (or sent something unasked).
  [[nodiscard]] virtual bool LooksAlive() = 0;

  // True when the last response was read completely and the server allows keep-alive.
  [[nodiscard]] virtual bool Reusable() const = 0;

  // True while Start has seen no byte of a response, i.e. the request may never have arrived.
  [[nodiscard]] virtual bool NothingReceived() const = 0;
};

}  // namespace http_internal
}  // namespace modelplane::core
