// HttpOriginRangeSource against a real core::HttpServer on 127.0.0.1 serving a temp folder, with
// routes that refuse, lie about their length, ignore Range or stall.
#include "node-agent/sources/http_origin_range_source.h"

#include <thread>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "core/http/http_server.h"
#include "core/text/percent_encoding.h"
#include "test_files.h"

namespace modelplane::agent {
namespace {

namespace http = boost::beast::http;
using core::ErrorCode;
using std::chrono::milliseconds;
using testing::PatternBytes;
using testing::TempFolder;

// Claims `extra` more bytes than it has, so the server ends the body early.
class LyingBodySource final : public core::BodySource {
 public:
  LyingBodySource(std::string data, std::uint64_t extra) : data_(std::move(data)), extra_(extra) {}
  [[nodiscard]] std::uint64_t Size() const override { return data_.size() + extra_; }
  [[nodiscard]] core::Result<std::size_t> ReadAt(std::uint64_t offset,
                                                 std::span<std::byte> out) override {
    if (offset >= data_.size()) {
      return core::MakeError(ErrorCode::kIo, "the lying source ran out");
    }
    const std::size_t n = std::min<std::size_t>(out.size(), data_.size() - offset);
    std::memcpy(out.data(), data_.data() + offset, n);
    return n;
  }

 private:
  std::string data_;
  std::uint64_t extra_;
};

class HttpOriginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    content_ = PatternBytes(300'000);
    folder_.Write("models/r1/model.safetensors", content_);
    folder_.Write("models/r1/dir with space/m\xC3\xBCller \xE6\x9D\x83.bin", "unicode bytes");

    core::Router router;
    const std::string root = folder_.path();
    router.HandlePrefix(http::verb::get, "/files/", [root](const core::ServerRequest& request) {
      const auto decoded = core::PercentDecode(request.path.substr(7));
      auto source = core::FileBodySource::Open(root + "/" + decoded.value_or(""));
      if (!decoded || !source) return core::ServerResponse::Text(http::status::not_found, "no");
      return core::ServerResponse::Stream(std::move(*source));
    });
    router.HandlePrefix(http::verb::get, "/forbidden/", [](const core::ServerRequest&) {
      return core::ServerResponse::Text(http::status::forbidden, "go away");
    });
    router.HandlePrefix(http::verb::get, "/login/", [](const core::ServerRequest&) {
      return core::ServerResponse::Text(http::status::unauthorized, "who are you");
    });
    router.HandlePrefix(http::verb::get, "/lying/", [this](const core::ServerRequest&) {
      return core::ServerResponse::Stream(std::make_unique<LyingBodySource>(content_, 50'000));
    });
    router.HandlePrefix(http::verb::get, "/no-range/", [this](const core::ServerRequest&) {
      return core::ServerResponse::Text(http::status::ok, content_);
    });
    router.HandlePrefix(http::verb::get, "/stall/", [](const core::ServerRequest&) {
      std::this_thread::sleep_for(milliseconds(1500));
      return core::ServerResponse::Text(http::status::ok, "late");
    });
    core::ServerOptions options;
    options.threads = 4;
    options.body_limit = 1024;
    options.stop_grace = milliseconds(3000);
    auto server = core::HttpServer::Create(options, std::move(router));
    ASSERT_TRUE(server.has_value()) << server.error().ToString();
    server_ = std::move(*server);

    core::ClientOptions client_options;
    client_options.retry.max_attempts = 1;  // sources leave retries to the fetch engine
    client_options.read_timeout = milliseconds(5000);
    auto client = core::HttpClient::Create(client_options);
    ASSERT_TRUE(client.has_value());
    client_ = std::move(*client);
  }

  std::unique_ptr<HttpOriginRangeSource> Source(const std::string& route) {
    auto source = HttpOriginRangeSource::Create(
        client_, {.name = "origin",
                  .base_url = fmt::format("http://127.0.0.1:{}/{}/", server_->port(), route)});
    EXPECT_TRUE(source.has_value()) << source.error().ToString();
    return std::move(*source);
  }

  static core::Status Read(RangeSource& source, const std::string& path, std::uint64_t offset,
                           std::string& out, const ReadContext& context = {}) {
    return source.ReadRange({.path = path}, offset,
                            {reinterpret_cast<std::byte*>(out.data()), out.size()}, context);
  }

  TempFolder folder_;
  std::string content_;
  std::unique_ptr<core::HttpServer> server_;
  std::shared_ptr<core::HttpClient> client_;
};

TEST_F(HttpOriginTest, RangesAreByteExact) {
  auto source = Source("files/models/r1");
  EXPECT_EQ(source->tier(), "http");
  EXPECT_EQ(source->name(), "http/origin");
  for (const auto& [offset, length] : {std::pair<std::size_t, std::size_t>{0, 300'000},
                                       {0, 1},
                                       {299'999, 1},
                                       {65'536, 131'072},
                                       {12'345, 67'890}}) {
    std::string out(length, '\0');
    auto status = Read(*source, "model.safetensors", offset, out);
    ASSERT_TRUE(status.has_value()) << status.error().ToString();
    EXPECT_EQ(out, content_.substr(offset, length)) << offset << "+" << length;
  }
}

TEST_F(HttpOriginTest, PathSegmentsArePercentEncoded) {
  auto source = Source("files/models/r1");
  EXPECT_EQ(source->UrlFor("dir with space/a+b.bin"),
            fmt::format("http://127.0.0.1:{}/files/models/r1/dir%20with%20space/a%2Bb.bin",
                        server_->port()));
  std::string out(13, '\0');
  auto status = Read(*source, "dir with space/m\xC3\xBCller \xE6\x9D\x83.bin", 0, out);
  ASSERT_TRUE(status.has_value()) << status.error().ToString();
  EXPECT_EQ(out, "unicode bytes");
}

TEST_F(HttpOriginTest, ParallelReadsShareOneClient) {
  auto source = Source("files/models/r1");
  std::string whole(content_.size(), '\0');
  std::atomic<int> failures{0};
  {
    std::vector<std::jthread> threads;
    constexpr std::size_t kPiece = 37'500;
    for (std::size_t offset = 0; offset < content_.size(); offset += kPiece) {
      threads.emplace_back([&, offset] {
        auto status =
            source->ReadRange({.path = "model.safetensors"}, offset,
                              {reinterpret_cast<std::byte*>(whole.data()) + offset, kPiece}, {});
        if (!status) ++failures;
      });
    }
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(whole, content_);
}

TEST_F(HttpOriginTest, MissingFileIsNotFound) {
  auto source = Source("files/models/r1");
  std::string out(10, '\0');
  auto status = Read(*source, "absent.safetensors", 0, out);
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kNotFound) << status.error().ToString();
}

TEST_F(HttpOriginTest, RefusalsMapToPermissionAndAuthentication) {
  std::string out(10, '\0');
  auto forbidden = Read(*Source("forbidden"), "x", 0, out);
  ASSERT_FALSE(forbidden.has_value());
  EXPECT_EQ(forbidden.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_FALSE(forbidden.error().retryable());
  auto login = Read(*Source("login"), "x", 0, out);
  ASSERT_FALSE(login.has_value());
  EXPECT_EQ(login.error().code(), ErrorCode::kUnauthenticated);
}

TEST_F(HttpOriginTest, BodyEndingBeforeItsContentLengthIsDataLoss) {
  auto source = Source("lying");
  std::string out(content_.size() + 20'000, '\0');
  auto status = Read(*source, "x", 0, out);
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kDataLoss) << status.error().ToString();
}

TEST_F(HttpOriginTest, RangePastTheEndOfTheFileIsDataLoss) {
  auto source = Source("files/models/r1");
  std::string straddling(1000, '\0');
  auto short_answer = Read(*source, "model.safetensors", content_.size() - 10, straddling);
  ASSERT_FALSE(short_answer.has_value());
  EXPECT_EQ(short_answer.error().code(), ErrorCode::kDataLoss) << short_answer.error().ToString();
  auto past_end = Read(*source, "model.safetensors", content_.size() + 10, straddling);
  ASSERT_FALSE(past_end.has_value());
  EXPECT_EQ(past_end.error().code(), ErrorCode::kDataLoss) << past_end.error().ToString();
}

TEST_F(HttpOriginTest, ServerIgnoringRangeFails) {
  auto source = Source("no-range");
  std::string out(100, '\0');
  auto status = Read(*source, "x", 100, out);
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kUnavailable) << status.error().ToString();
}

TEST_F(HttpOriginTest, StalledOriginEndsAtTheDeadline) {
  auto source = Source("stall");
  std::string out(100, '\0');
  const auto start = std::chrono::steady_clock::now();
  auto status = Read(*source, "x", 0, out, {.deadline = start + milliseconds(300)});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kDeadlineExceeded) << status.error().ToString();
  EXPECT_LT(elapsed, milliseconds(1000));
}

TEST_F(HttpOriginTest, CancelledReadDoesNotStart) {
  auto source = Source("files/models/r1");
  core::CancellationToken cancel;
  cancel.Cancel();
  std::string out(100, '\0');
  auto status = Read(*source, "model.safetensors", 0, out, {.cancel = &cancel});
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kCancelled);
}

TEST(HttpOriginCreate, RejectsBadBaseUrls) {
  auto client = core::HttpClient::Create({});
  ASSERT_TRUE(client.has_value());
  std::shared_ptr<core::HttpClient> shared = std::move(*client);
  EXPECT_FALSE(HttpOriginRangeSource::Create(shared, {.name = "o", .base_url = "ftp://x/y"}));
  EXPECT_FALSE(
      HttpOriginRangeSource::Create(shared, {.name = "o", .base_url = "http://x/y?token=1"}));
}

}  // namespace
}  // namespace modelplane::agent
