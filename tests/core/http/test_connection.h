// A raw loopback HTTP/1.1 connection for tests: sends exactly the bytes a test writes (including
// malformed or deliberately slow requests) and parses responses with Beast, every wait bounded.
//
// Independent of core/http's client on purpose, so server tests do not trust the code under test
// on both ends. Thread safety: one thread per connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "core/error/error.h"

namespace modelplane::core::testing {

using TestResponse = boost::beast::http::response<boost::beast::http::string_body>;

class TestConnection {
 public:
  // `from`: a loopback address (host order, e.g. 0x7f000002 for 127.0.0.2) to connect from, so
  // a server sees a client of another address; 0: the kernel's choice.
  [[nodiscard]] static Result<std::unique_ptr<TestConnection>> Open(
      std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(10),
      std::uint32_t from = 0);
  TestConnection(const TestConnection&) = delete;
  TestConnection& operator=(const TestConnection&) = delete;
  ~TestConnection();

  [[nodiscard]] Status Send(std::string_view bytes);
  // Reads one response; `head` when it answers a HEAD request (no body follows).
  [[nodiscard]] Result<TestResponse> ReadResponse(bool head = false);
  [[nodiscard]] Result<TestResponse> RoundTrip(std::string_view request, bool head = false);
  // True once the server closed the connection (EOF or reset) within `timeout`.
  [[nodiscard]] bool WaitClosed(std::chrono::milliseconds timeout);

 private:
  TestConnection(int fd, std::chrono::milliseconds timeout) : fd_(fd), timeout_(timeout) {}
  // Receives into buffer_; 0 at EOF, an error on timeout or reset.
  [[nodiscard]] Result<std::size_t> Receive(std::chrono::steady_clock::time_point deadline);

  int fd_;
  std::chrono::milliseconds timeout_;
  boost::beast::flat_buffer buffer_;
};

// "METHOD target HTTP/1.1" with Host, the extra header lines (each ending in \r\n) and a body
// with its Content-Length.
[[nodiscard]] std::string MakeRawRequest(std::string_view method, std::string_view target,
                                         std::string_view extra_headers = {},
                                         std::string_view body = {});

}  // namespace modelplane::core::testing
