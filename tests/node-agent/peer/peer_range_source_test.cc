#include "node-agent/peer/peer_range_source.h"

#include <chrono>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/io/unique_fd.h"
#include "tests/node-agent/peer/peer_test_support.h"

namespace modelplane::agent {
namespace {

using namespace std::chrono_literals;

SourceFile FileOf(const testing::TestBlob& blob) {
  return SourceFile{.path = "model.safetensors", .sha256 = blob.digest, .size = blob.bytes.size()};
}

std::string AsString(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

class PeerRangeSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { cache_.SetUp(); }

  std::unique_ptr<PeerRangeSource> MakeSource(std::uint16_t port, std::optional<PeerTokenKey> key,
                                              bool tls = false) {
    PeerRangeSourceOptions options;
    options.endpoint = "127.0.0.1:" + std::to_string(port);
    options.token_key = std::move(key);
    if (tls) {
      options.tls =
          core::TlsClientOptions{.ca_file = cache_.pki().ca_file,
                                 .certificate_chain_file = cache_.pki().client_certificate_file,
                                 .private_key_file = cache_.pki().client_key_file};
    }
    options.stall_timeout = 5s;
    auto source = PeerRangeSource::Create(std::move(options), clock_);
    EXPECT_TRUE(source) << source.error().ToString();
    return source ? std::move(*source) : nullptr;
  }

  testing::PeerCache cache_;
  core::SystemClock clock_;
  const PeerTokenKey key_ = testing::MakeKey();
};

TEST_F(PeerRangeSourceTest, ReadsRangesByteExactWithTokensAndWithMutualTls) {
  const testing::TestBlob blob = cache_.AddBlob(5 * 1024 * 1024 + 3);
  for (const bool tls : {false, true}) {
    SCOPED_TRACE(tls ? "mutual TLS" : "plain HTTP with tokens");
    auto server = cache_.StartServer(tls ? cache_.MutualTlsOptions()
                                         : testing::PeerCache::PlainTokenOptions());
    ASSERT_TRUE(server);
    auto source = MakeSource(server->port(), tls ? std::nullopt : std::optional(key_), tls);
    ASSERT_TRUE(source);
    EXPECT_EQ(source->tier(), "peer");
    EXPECT_EQ(source->name(), "peer/127.0.0.1:" + std::to_string(server->port()));

    // Ranges the engine would plan: aligned, unaligned, the last partial one, one byte.
    const std::vector<std::pair<std::uint64_t, std::size_t>> ranges = {
        {0, 1024 * 1024}, {1024 * 1024 + 7, 3 * 1024 * 1024}, {5 * 1024 * 1024, 3}, {42, 1}};
    for (const auto& [offset, length] : ranges) {
      std::vector<std::byte> destination(length);
      auto read = source->ReadRange(FileOf(blob), offset, destination, {});
      ASSERT_TRUE(read) << read.error().ToString();
      EXPECT_EQ(AsString(destination), blob.bytes.substr(offset, length)) << offset;
    }
  }
}

TEST_F(PeerRangeSourceTest, MapsPeerAnswersToTheRangeSourceErrors) {
  const testing::TestBlob blob = cache_.AddBlob(1024 * 1024);
  PeerServerOptions options = testing::PeerCache::PlainTokenOptions();
  options.max_streams = 1;
  options.max_upload_bytes_per_second = 256 * 1024;  // keeps the one stream busy for a while
  options.stop_grace = 100ms;
  auto server = cache_.StartServer(std::move(options));
  ASSERT_TRUE(server);
  auto source = MakeSource(server->port(), key_);
  ASSERT_TRUE(source);
  std::vector<std::byte> destination(4096);

  const testing::TestBlob absent{.bytes = std::string(4096, 'a'),
                                 .digest = core::Sha256Of(std::string(4096, 'a'))};
  auto not_found = source->ReadRange(FileOf(absent), 0, destination, {});
  ASSERT_FALSE(not_found);
  EXPECT_EQ(not_found.error().code(), core::ErrorCode::kNotFound);

  auto stranger = MakeSource(server->port(), testing::MakeKey('z'));
  auto unauthenticated = stranger->ReadRange(FileOf(blob), 0, destination, {});
  ASSERT_FALSE(unauthenticated);
  EXPECT_EQ(unauthenticated.error().code(), core::ErrorCode::kUnauthenticated);
  EXPECT_FALSE(unauthenticated.error().retryable());

  // The catalog's blob is shorter than the file the engine asks for: a truncated source.
  SourceFile longer = FileOf(blob);
  longer.size += 100;
  std::vector<std::byte> tail(200);
  auto short_body = source->ReadRange(longer, blob.bytes.size() - 100, tail, {});
  ASSERT_FALSE(short_body);
  EXPECT_EQ(short_body.error().code(), core::ErrorCode::kDataLoss) << short_body.error().ToString();

  // The only stream slot is busy: 503 becomes a retryable kThrottled.
  std::vector<std::byte> whole(blob.bytes.size());
  core::CancellationToken stop_slow;
  // The earlier requests' streams may still be closing; the count must reach 0 first, or the
  // wait below could see one of them and not the slow stream.
  const auto drained = std::chrono::steady_clock::now() + 5s;
  while (server->streams_in_flight() != 0 && std::chrono::steady_clock::now() < drained) {
    std::this_thread::sleep_for(2ms);
  }
  ASSERT_EQ(server->streams_in_flight(), 0u);
  std::thread slow(
      [&] { (void)source->ReadRange(FileOf(blob), 0, whole, {.cancel = &stop_slow}); });
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (server->streams_in_flight() == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(2ms);
  }
  ASSERT_EQ(server->streams_in_flight(), 1u);
  auto throttled = source->ReadRange(FileOf(blob), 0, destination, {});
  ASSERT_FALSE(throttled);
  EXPECT_EQ(throttled.error().code(), core::ErrorCode::kThrottled) << throttled.error().ToString();
  EXPECT_TRUE(throttled.error().retryable());
  stop_slow.Cancel();
  slow.join();
}

TEST_F(PeerRangeSourceTest, CancellationStopsATransferInProgress) {
  const testing::TestBlob blob = cache_.AddBlob(4 * 1024 * 1024);
  PeerServerOptions options = testing::PeerCache::PlainTokenOptions();
  options.max_upload_bytes_per_second = 1024 * 1024;  // 4 s for the whole blob
  options.stop_grace = 100ms;
  auto server = cache_.StartServer(std::move(options));
  ASSERT_TRUE(server);
  auto source = MakeSource(server->port(), key_);
  ASSERT_TRUE(source);

  core::CancellationToken already;
  already.Cancel();
  std::vector<std::byte> destination(blob.bytes.size());
  auto before = source->ReadRange(FileOf(blob), 0, destination, {.cancel = &already});
  ASSERT_FALSE(before);
  EXPECT_EQ(before.error().code(), core::ErrorCode::kCancelled);

  core::CancellationToken cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(300ms);
    cancel.Cancel();
  });
  const auto start = std::chrono::steady_clock::now();
  auto during = source->ReadRange(FileOf(blob), 0, destination, {.cancel = &cancel});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  canceller.join();
  ASSERT_FALSE(during);
  EXPECT_EQ(during.error().code(), core::ErrorCode::kCancelled) << during.error().ToString();
  EXPECT_LT(elapsed, 2s);
}

TEST_F(PeerRangeSourceTest, DeadlineEndsAReadFromAStalledPeer) {
  // A real listening socket whose owner never answers: the kernel completes connections into
  // the backlog, and the request is never read.
  core::UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener.valid());
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener.get(), 16), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
  auto source = MakeSource(ntohs(address.sin_port), key_);
  ASSERT_TRUE(source);

  const testing::TestBlob blob{.bytes = "x", .digest = core::Sha256Of("x")};
  std::vector<std::byte> destination(1);
  const auto start = std::chrono::steady_clock::now();
  auto stalled = source->ReadRange(FileOf(blob), 0, destination,
                                   {.deadline = std::chrono::steady_clock::now() + 300ms});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(stalled);
  EXPECT_EQ(stalled.error().code(), core::ErrorCode::kDeadlineExceeded)
      << stalled.error().ToString();
  EXPECT_GE(elapsed, 250ms);
  EXPECT_LT(elapsed, 2s);

  auto past = source->ReadRange(FileOf(blob), 0, destination,
                                {.deadline = std::chrono::steady_clock::now() - 1ms});
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().code(), core::ErrorCode::kDeadlineExceeded);
}

TEST_F(PeerRangeSourceTest, RefusesRangesOutsideTheFile) {
  auto source = MakeSource(1, key_);
  ASSERT_TRUE(source);
  const testing::TestBlob blob{.bytes = "abc", .digest = core::Sha256Of("abc")};
  std::vector<std::byte> destination(2);
  auto outside = source->ReadRange(FileOf(blob), 2, destination, {});
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().code(), core::ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace modelplane::agent
