// What one caller can make the real extender binary hold in memory: a 64 MiB body, declared or
// chunked, is answered 413 before it is read, and the process's peak resident memory (VmHWM in
// /proc/<pid>/status) does not grow by it; bodies beyond server.maxConcurrentBodies get 503 from
// their headers alone while the first ones are still arriving. The numbers are printed for
// docs/scheduler-extender.md.
#include <future>
#include <iostream>

#include <arpa/inet.h>
#include <sys/time.h>

#include "tests/scheduler-extender/cluster/extender_cluster_fixture.h"

namespace modelplane::extender {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::size_t k64MiB = std::size_t{64} << 20;

// A raw loopback TCP connection with send and receive deadlines, for requests no HTTP client
// would send: a body far past the limit, or one that stops halfway.
class RawConnection {
 public:
  explicit RawConnection(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    timeval timeout{.tv_sec = 5, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  ~RawConnection() { ::close(fd_); }

  [[nodiscard]] bool connected() const { return connected_; }

  // Sends all of `bytes`; false once the peer stopped taking them (closed, reset, deadline).
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
    return true;
  }

  // The status code of the response's first line, 0 when none came before `timeout`.
  int ReadStatus(milliseconds timeout) {
    timeval wait{.tv_sec = static_cast<time_t>(timeout.count() / 1000),
                 .tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    std::string head;
    char buffer[4096];
    while (head.find("\r\n") == std::string::npos) {
      const ssize_t got = ::recv(fd_, buffer, sizeof buffer, 0);
      if (got <= 0) return 0;
      head.append(buffer, static_cast<std::size_t>(got));
    }
    // "HTTP/1.1 413 Payload Too Large"
    return head.size() > 12 ? std::atoi(head.c_str() + 9) : 0;
  }

  void Shutdown() { ::shutdown(fd_, SHUT_RDWR); }

 private:
  int fd_;
  bool connected_ = false;
};

std::string Headers(std::string_view framing) {
  return "POST /scheduler/filter HTTP/1.1\r\nHost: extender\r\n"
         "Content-Type: application/json\r\n" +
         std::string(framing) + "\r\n";
}

struct Refusal {
  int status = 0;
  milliseconds took{0};
  std::size_t bytes_taken = 0;  // how much of the body the kernel accepted before it stopped
};

// Sends the headers and then up to 64 MiB of body (as `chunk` pieces) from a second thread
// while this one waits for the answer.
Refusal PostBody(std::uint16_t port, std::string_view framing, bool chunked) {
  RawConnection connection(port);
  Refusal refusal;
  if (!connection.connected() || !connection.Send(Headers(framing))) return refusal;
  const auto started = std::chrono::steady_clock::now();
  auto writer = std::async(std::launch::async, [&] {
    const std::string piece(64 * 1024, ' ');
    const std::string chunk = "10000\r\n" + piece + "\r\n";  // 0x10000 = 64 KiB
    std::size_t taken = 0;
    while (taken < k64MiB && connection.Send(chunked ? chunk : piece)) taken += piece.size();
    if (chunked && taken == k64MiB) connection.Send("0\r\n\r\n");
    return taken;
  });
  refusal.status = connection.ReadStatus(seconds(10));
  refusal.took =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
  connection.Shutdown();
  refusal.bytes_taken = writer.get();
  return refusal;
}

class RequestBoundsClusterTest : public testing::ExtenderClusterTest {
 protected:
  // A handful of ordinary requests first, so the peak below is the serving process's, not its
  // start-up's.
  void WarmUp() {
    const json body = {{"Pod", {{"metadata", {{"name", "p"}, {"namespace", namespace_}}}}},
                       {"Nodes", nullptr},
                       {"NodeNames", {"gpu-node-0", "gpu-node-1", "gpu-node-2"}}};
    for (int i = 0; i < 20; ++i) {
      core::ClientRequest request{.method = boost::beast::http::verb::post,
                                  .url = UrlPrefix() + "/filter",
                                  .body = body.dump()};
      auto response = http_->Fetch(request);
      ASSERT_TRUE(response) << response.error().ToString();
    }
  }
};

TEST_F(RequestBoundsClusterTest, A64MiBBodyIsRefusedEarlyWithoutMemoryGrowth) {
  StartExtender();  // the defaults: bodyLimit 1Mi
  if (HasFatalFailure()) return;
  WarmUp();
  if (HasFatalFailure()) return;
  const testing::ProcessMemory before = testing::ReadProcessMemory(extender_.pid());
  ASSERT_GT(before.peak_kib, 0);

  const Refusal declared =
      PostBody(extender_port_, "Content-Length: " + std::to_string(k64MiB) + "\r\n", false);
  const Refusal chunked = PostBody(extender_port_, "Transfer-Encoding: chunked\r\n", true);
  const testing::ProcessMemory after = testing::ReadProcessMemory(extender_.pid());

  std::cout << "extender memory: VmHWM before " << before.peak_kib << " KiB, after "
            << after.peak_kib << " KiB; VmRSS before " << before.resident_kib << " KiB, after "
            << after.resident_kib << " KiB\n"
            << "declared 64 MiB: HTTP " << declared.status << " after " << declared.took.count()
            << " ms, " << declared.bytes_taken / 1024 << " KiB of body taken by the kernel\n"
            << "chunked 64 MiB: HTTP " << chunked.status << " after " << chunked.took.count()
            << " ms, " << chunked.bytes_taken / 1024 << " KiB of body taken by the kernel\n";
  // Early is before the sender got the body out: the answer came while the kernel still held
  // back part of it (checked below with bytes_taken), whatever the machine's load made of the
  // time it took (ReadStatus gives up after 10 s, which a status of 0 would show).
  EXPECT_EQ(declared.status, 413);
  EXPECT_EQ(chunked.status, 413);
  // Neither body was kept: the peak grew by less than a fifth of one (the limit is 1 MiB, the
  // lingering drain reads up to 1 MiB more through a 64 KiB buffer).
  EXPECT_LT(after.peak_kib - before.peak_kib, 12 * 1024)
      << "before " << before.peak_kib << " KiB, after " << after.peak_kib << " KiB";
  EXPECT_LT(declared.bytes_taken, k64MiB);
  EXPECT_LT(chunked.bytes_taken, k64MiB);

  // And it still serves.
  WarmUp();
}

TEST_F(RequestBoundsClusterTest, BodiesBeyondTheConcurrencyBoundGet503BeforeBeingRead) {
  StartExtender({.server_lines = {"maxConcurrentBodies: 4"}});
  if (HasFatalFailure()) return;
  WarmUp();
  if (HasFatalFailure()) return;
  const testing::ProcessMemory before = testing::ReadProcessMemory(extender_.pid());

  // Twelve callers each declare a body just under the limit and send a tenth of it: four hold
  // a slot while their bodies arrive, the other eight are answered from their headers.
  constexpr int kCallers = 12;
  const std::size_t declared = 1000 * 1000;
  std::vector<std::unique_ptr<RawConnection>> callers;
  for (int i = 0; i < kCallers; ++i) {
    auto connection = std::make_unique<RawConnection>(extender_port_);
    ASSERT_TRUE(connection->connected());
    ASSERT_TRUE(connection->Send(Headers("Content-Length: " + std::to_string(declared) + "\r\n") +
                                 std::string(declared / 10, ' ')));
    callers.push_back(std::move(connection));
  }
  int refused = 0;
  int waiting = 0;
  const auto started = std::chrono::steady_clock::now();
  for (auto& caller : callers) {
    const int status = caller->ReadStatus(milliseconds(300));
    if (status == 503) ++refused;
    if (status == 0) ++waiting;
  }
  const auto took = std::chrono::steady_clock::now() - started;
  const testing::ProcessMemory after = testing::ReadProcessMemory(extender_.pid());
  std::cout << "maxConcurrentBodies 4, " << kCallers << " callers: " << refused << " got 503, "
            << waiting << " still sending; VmHWM before " << before.peak_kib << " KiB, after "
            << after.peak_kib << " KiB\n";
  EXPECT_EQ(refused, kCallers - 4);
  EXPECT_EQ(waiting, 4);
  EXPECT_LT(took, seconds(5));
  EXPECT_NE(extender_.Log().find("reason=too_many_bodies_in_flight"), std::string::npos)
      << extender_.Log();

  // Once the slow callers go, the slots are free again.
  callers.clear();
  EXPECT_TRUE(core::testing::WaitUntil(
      [&] {
        core::ClientRequest request{
            .method = boost::beast::http::verb::post,
            .url = UrlPrefix() + "/filter",
            .body = R"({"Pod":{"metadata":{"name":"p"}},"Nodes":null,"NodeNames":["gpu-node-0"]})"};
        return http_->Fetch(request).has_value();
      },
      seconds(10)));
}

}  // namespace
}  // namespace modelplane::extender
