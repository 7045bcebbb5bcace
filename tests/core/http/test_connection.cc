#include "tests/core/http/test_connection.h"

#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>

#include <arpa/inet.h>
#include <boost/beast/http/parser.hpp>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace modelplane::core::testing {

namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;

Result<std::unique_ptr<TestConnection>> TestConnection::Open(std::uint16_t port,
                                                             std::chrono::milliseconds timeout,
                                                             std::uint32_t from) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return MakeError(ErrorCode::kIo,
                     fmt::format("socket: {}", std::system_category().message(errno)));
  if (from != 0) {
    sockaddr_in source{};
    source.sin_family = AF_INET;
    source.sin_addr.s_addr = htonl(from);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof(source)) != 0) {
      const int error = errno;
      ::close(fd);
      return MakeError(ErrorCode::kIo,
                       fmt::format("bind: {}", std::system_category().message(error)));
    }
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    ::close(fd);
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("connect: {}", std::system_category().message(error)));
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return std::unique_ptr<TestConnection>(new TestConnection(fd, timeout));
}

TestConnection::~TestConnection() {
  ::close(fd_);
}

Status TestConnection::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return MakeError(ErrorCode::kUnavailable,
                       fmt::format("send: {}", std::system_category().message(errno)));
    }
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  return Ok();
}

Result<std::size_t> TestConnection::Receive(Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return MakeError(ErrorCode::kDeadlineExceeded, "receive timed out");
    pollfd poll_fd{fd_, POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      return MakeError(ErrorCode::kIo,
                       fmt::format("poll: {}", std::system_category().message(errno)));
    }
    if (ready <= 0) continue;
    auto space = buffer_.prepare(64 * 1024);
    const ssize_t received = ::recv(fd_, space.data(), space.size(), 0);
    if (received < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return MakeError(ErrorCode::kUnavailable,
                       fmt::format("recv: {}", std::system_category().message(errno)));
    }
    buffer_.commit(static_cast<std::size_t>(received));
    return static_cast<std::size_t>(received);
  }
}

Result<TestResponse> TestConnection::ReadResponse(bool head) {
  http::response_parser<http::string_body> parser;
  // Beast 1.74 compares with an empty optional wrongly (len > none is true): no body_limit(none).
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  parser.skip(head);
  const auto deadline = Clock::now() + timeout_;
  for (;;) {
    if (buffer_.size() > 0) {
      boost::beast::error_code error;
      const std::size_t used = parser.put(buffer_.data(), error);
      buffer_.consume(used);
      if (error && error != http::error::need_more) {
        return MakeError(ErrorCode::kInvalidArgument, "bad response: " + error.message());
      }
      if (parser.is_done()) return parser.release();
      if (used > 0 && !error) continue;
    }
    auto received = Receive(deadline);
    if (!received) return std::unexpected(received.error());
    if (*received == 0) {
      boost::beast::error_code error;
      parser.put_eof(error);
      if (!error && parser.is_done()) return parser.release();
      return MakeError(ErrorCode::kUnavailable, "connection closed before a full response");
    }
  }
}

Result<TestResponse> TestConnection::RoundTrip(std::string_view request, bool head) {
  if (auto status = Send(request); !status) return std::unexpected(status.error());
  return ReadResponse(head);
}

bool TestConnection::WaitClosed(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    buffer_.clear();
    auto received = Receive(deadline);
    if (!received) return received.error().code() == ErrorCode::kUnavailable;  // reset
    if (*received == 0) return true;
  }
}

std::string MakeRawRequest(std::string_view method, std::string_view target,
                           std::string_view extra_headers, std::string_view body) {
  std::string request =
      fmt::format("{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\n{}", method, target, extra_headers);
  if (!body.empty() || method == "POST" || method == "PUT") {
    request += fmt::format("Content-Length: {}\r\n", body.size());
  }
  request += "\r\n";
  request += body;
  return request;
}

}  // namespace modelplane::core::testing
