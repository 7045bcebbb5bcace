// HubRangeSource against two real core::HttpServers: a "hub" on 127.0.0.1 whose resolve answers
// bytes, a 302 to a "CDN" on 127.0.0.2, a same-origin 307, a redirect elsewhere or a 429; and
// the CDN, which serves ranges, can expire its signatures and can throttle. Both record whether
// an Authorization header reached them.
#include "node-agent/sources/hub_range_source.h"

#include <atomic>
#include <mutex>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "core/api/model_revision.h"
#include "core/http/http_server.h"
#include "test_files.h"

namespace modelplane::agent {
namespace {

namespace http = boost::beast::http;
using core::ErrorCode;
using std::chrono::milliseconds;
using testing::PatternBytes;
using testing::TempFolder;

constexpr std::string_view kCommit = "0123456789abcdef0123456789abcdef01234567";

struct Seen {
  std::mutex mutex;
  std::vector<std::string> requests;  // "<target> auth=<yes|no>"
  void Record(const core::ServerRequest& request) {
    const bool auth = request.headers.find(http::field::authorization) != request.headers.end();
    const std::scoped_lock lock(mutex);
    requests.push_back(fmt::format("{} auth={}", request.target, auth ? "yes" : "no"));
  }
  std::size_t Count(std::string_view part) {
    const std::scoped_lock lock(mutex);
    return static_cast<std::size_t>(std::ranges::count_if(
        requests, [&](const std::string& line) { return line.find(part) != std::string::npos; }));
  }
};

class HubRangeSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    content_ = PatternBytes(200'000);
    folder_.Write("big.bin", content_);
    folder_.Write("small.json", "{\"small\": true}");
    const std::string root = folder_.path();

    core::ServerOptions options;
    options.threads = 4;
    options.body_limit = 1024;
    options.stop_grace = milliseconds(3000);

    core::Router cdn_router;
    cdn_router.HandlePrefix(http::verb::get, "/blob/", [this, root](const core::ServerRequest& r) {
      cdn_seen_.Record(r);
      if (cdn_expired_.exchange(0) > 0) {
        return core::ServerResponse::Text(http::status::forbidden, "signature expired");
      }
      if (cdn_throttled_) return core::ServerResponse::Text(http::status::service_unavailable, "");
      auto file = core::FileBodySource::Open(root + "/" + r.path.substr(6));
      if (!file) return core::ServerResponse::Text(http::status::not_found, "no");
      return core::ServerResponse::Stream(std::move(*file));
    });
    options.address = "127.0.0.2";
    auto cdn = core::HttpServer::Create(options, std::move(cdn_router));
    ASSERT_TRUE(cdn.has_value()) << cdn.error().ToString();
    cdn_ = std::move(*cdn);

    core::Router hub_router;
    const std::string resolve = fmt::format("/org/model/resolve/{}/", kCommit);
    hub_router.HandlePrefix(
        http::verb::get, resolve, [this, root, resolve](const core::ServerRequest& r) {
          hub_seen_.Record(r);
          const std::string path = r.path.substr(resolve.size());
          if (hub_throttled_) {
            auto answer = core::ServerResponse::Text(http::status::too_many_requests, "slow down");
            answer.headers.set(http::field::retry_after, "1");
            return answer;
          }
          if (path == "private.bin" &&
              r.headers[http::field::authorization] != "Bearer " + accepted_token_) {
            return core::ServerResponse::Text(http::status::unauthorized, "Invalid credentials");
          }
          std::string location;
          if (path == "big.bin" || path == "private.bin") {
            location =
                fmt::format("http://127.0.0.2:{}/blob/big.bin?sig={}", cdn_->port(), ++signatures_);
          } else if (path == "cached.json") {
            location = "/api/resolve-cache/small.json";
          } else if (path == "elsewhere.bin") {
            location = fmt::format("http://127.0.0.3:{}/blob/big.bin", cdn_->port());
          }
          if (!location.empty()) {
            auto answer = core::ServerResponse::Text(
                path == "cached.json" ? http::status::temporary_redirect : http::status::found, "");
            answer.headers.set(http::field::location, location);
            return answer;
          }
          auto file = core::FileBodySource::Open(root + "/" + path);
          if (!file) return core::ServerResponse::Text(http::status::not_found, "Entry not found");
          return core::ServerResponse::Stream(std::move(*file));
        });
    hub_router.HandlePrefix(
        http::verb::get, "/api/resolve-cache/", [this, root](const core::ServerRequest& r) {
          hub_seen_.Record(r);
          auto file = core::FileBodySource::Open(root + "/" + r.path.substr(19));
          if (!file) return core::ServerResponse::Text(http::status::not_found, "");
          return core::ServerResponse::Stream(std::move(*file));
        });
    options.address = "127.0.0.1";
    auto hub = core::HttpServer::Create(options, std::move(hub_router));
    ASSERT_TRUE(hub.has_value()) << hub.error().ToString();
    hub_ = std::move(*hub);

    core::ClientOptions client_options;
    client_options.retry.max_attempts = 1;  // sources leave retries to the fetch engine
    client_options.read_timeout = milliseconds(5000);
    auto client = core::HttpClient::Create(client_options);
    ASSERT_TRUE(client.has_value());
    client_ = std::move(*client);
  }

  std::unique_ptr<HubRangeSource> Source(std::vector<std::string> redirect_hosts = {"127.0.0.2"},
                                         HubTokenProvider token = nullptr,
                                         std::shared_ptr<HubRedirectMemory> redirects = nullptr,
                                         std::string credential_scope = "") {
    auto source = HubRangeSource::Create(
        client_, {.name = "hub",
                  .type = std::string(core::api::kSourceHuggingFace),
                  .endpoint = fmt::format("http://127.0.0.1:{}/", hub_->port()),
                  .repository = "org/model",
                  .commit = std::string(kCommit),
                  .redirect_hosts = std::move(redirect_hosts),
                  .token = std::move(token),
                  .credential_scope = std::move(credential_scope),
                  .redirects = std::move(redirects)});
    EXPECT_TRUE(source.has_value()) << source.error().ToString();
    return std::move(*source);
  }

  HubTokenProvider Token() {
    return [this](bool fresh) -> core::Result<std::string> {
      ++(fresh ? fresh_tokens_ : tokens_);
      return fresh ? secret_token_ : std::string("stale-token");
    };
  }

  static core::Status Read(RangeSource& source, const std::string& path, std::uint64_t offset,
                           std::string& out) {
    return source.ReadRange({.path = path}, offset,
                            {reinterpret_cast<std::byte*>(out.data()), out.size()}, {});
  }

  TempFolder folder_;
  std::string content_;
  Seen hub_seen_;
  Seen cdn_seen_;
  std::atomic<int> signatures_{0};
  std::atomic<int> cdn_expired_{0};
  std::atomic<bool> cdn_throttled_{false};
  std::atomic<bool> hub_throttled_{false};
  const std::string accepted_token_ = "fresh-token";  // what the hub accepts
  std::string secret_token_ = "fresh-token";          // what the Secret holds now
  int tokens_ = 0;
  int fresh_tokens_ = 0;
  std::unique_ptr<core::HttpServer> cdn_;
  std::unique_ptr<core::HttpServer> hub_;
  std::shared_ptr<core::HttpClient> client_;
};

TEST_F(HubRangeSourceTest, ALargeFileIsReadFromTheCdnItRedirectsToAndTheTokenStaysHome) {
  auto source = Source({"127.0.0.2"}, [](bool) -> core::Result<std::string> { return "t0ken"; });
  EXPECT_EQ(source->tier(), "hub");
  EXPECT_EQ(source->name(), "hub/hub");
  for (const auto& [offset, length] :
       {std::pair<std::size_t, std::size_t>{0, 65'536}, {65'536, 100'000}, {199'999, 1}}) {
    std::string out(length, '\0');
    auto status = Read(*source, "big.bin", offset, out);
    ASSERT_TRUE(status.has_value()) << status.error().ToString();
    EXPECT_EQ(out, content_.substr(offset, length));
  }
  // One resolve, with the token; every range from the CDN without it.
  EXPECT_EQ(hub_seen_.Count("auth=yes"), 1u);
  EXPECT_EQ(hub_seen_.Count("auth=no"), 0u);
  EXPECT_EQ(cdn_seen_.Count("/blob/big.bin"), 3u);
  EXPECT_EQ(cdn_seen_.Count("auth=yes"), 0u);
}

TEST_F(HubRangeSourceTest, SourcesSharingAMemoryResolveOnceAndOnlyWithTheSameCredentials) {
  const auto memory = std::make_shared<HubRedirectMemory>();
  std::string out(1000, '\0');
  ASSERT_TRUE(Read(*Source({"127.0.0.2"}, nullptr, memory, "team-a/hf"), "big.bin", 0, out));
  // A later staging or proof of the same node and credentials: straight to the CDN.
  ASSERT_TRUE(Read(*Source({"127.0.0.2"}, nullptr, memory, "team-a/hf"), "big.bin", 5000, out));
  EXPECT_EQ(hub_seen_.Count("/resolve/"), 1u);
  EXPECT_EQ(out, content_.substr(5000, 1000));
  // Another tenant's source never reads through a URL the first one's token obtained.
  ASSERT_TRUE(Read(*Source({"127.0.0.2"}, nullptr, memory, "team-b/hf"), "big.bin", 0, out));
  ASSERT_TRUE(Read(*Source({"127.0.0.2"}, nullptr, memory, ""), "big.bin", 0, out));
  EXPECT_EQ(hub_seen_.Count("/resolve/"), 3u);
  EXPECT_EQ(memory->size(), 3u);
}

TEST(HubRedirectMemory, ExpiresAndStaysWithinItsCapacity) {
  HubRedirectMemory memory(2);
  const core::Clock::SteadyTime now{};
  memory.Remember("a", "https://cdn/a", now, std::chrono::seconds(10));
  memory.Remember("b", "https://cdn/b", now, std::chrono::seconds(20));
  EXPECT_EQ(memory.Find("a", now + std::chrono::seconds(9)), "https://cdn/a");
  EXPECT_EQ(memory.Find("a", now + std::chrono::seconds(10)), std::nullopt);
  memory.Remember("a", "https://cdn/a", now, std::chrono::seconds(10));
  memory.Remember("c", "https://cdn/c", now,
                  std::chrono::seconds(30));  // full: the first to go goes
  EXPECT_EQ(memory.size(), 2u);
  EXPECT_EQ(memory.Find("a", now), std::nullopt);
  EXPECT_EQ(memory.Find("c", now), "https://cdn/c");
}

TEST_F(HubRangeSourceTest, AnExpiredSignatureAsksTheHubForANewOne) {
  auto source = Source();
  std::string out(1000, '\0');
  ASSERT_TRUE(Read(*source, "big.bin", 0, out).has_value());
  cdn_expired_ = 1;
  auto status = Read(*source, "big.bin", 5000, out);
  ASSERT_TRUE(status.has_value()) << status.error().ToString();
  EXPECT_EQ(out, content_.substr(5000, 1000));
  EXPECT_EQ(hub_seen_.Count("/resolve/"), 2u);
  EXPECT_EQ(cdn_seen_.Count("sig=2"), 1u);
}

TEST_F(HubRangeSourceTest, SmallFilesAndSameOriginRedirectsKeepTheToken) {
  auto source = Source({}, [](bool) -> core::Result<std::string> { return "t0ken"; });
  std::string out(15, '\0');
  auto direct = Read(*source, "small.json", 0, out);
  ASSERT_TRUE(direct.has_value()) << direct.error().ToString();
  EXPECT_EQ(out, "{\"small\": true}");
  auto cached = Read(*source, "cached.json", 0, out);
  ASSERT_TRUE(cached.has_value()) << cached.error().ToString();
  EXPECT_EQ(out, "{\"small\": true}");
  EXPECT_EQ(hub_seen_.Count("/api/resolve-cache/small.json auth=yes"), 1u);
}

TEST_F(HubRangeSourceTest, ARedirectToAHostThePolicyDoesNotListIsRefused) {
  std::string out(100, '\0');
  auto to_elsewhere = Read(*Source(), "elsewhere.bin", 0, out);
  ASSERT_FALSE(to_elsewhere.has_value());
  EXPECT_EQ(to_elsewhere.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(to_elsewhere.error().message().find("redirectHosts"), std::string::npos);
  // No redirect host at all: even the CDN is refused, and never asked.
  auto to_cdn = Read(*Source({}), "big.bin", 0, out);
  ASSERT_FALSE(to_cdn.has_value());
  EXPECT_EQ(to_cdn.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(cdn_seen_.Count("/blob/"), 0u);
  // "*.domain" never matches an IP literal's neighbours.
  auto wildcard = Read(*Source({"*.0.0.2"}), "big.bin", 0, out);
  EXPECT_FALSE(wildcard.has_value());
}

TEST_F(HubRangeSourceTest, TheHubs429AndTheCdns503AreThrottling) {
  auto source = Source();
  std::string out(100, '\0');
  hub_throttled_ = true;
  auto hub = Read(*source, "big.bin", 0, out);
  ASSERT_FALSE(hub.has_value());
  EXPECT_EQ(hub.error().code(), ErrorCode::kThrottled);
  EXPECT_TRUE(hub.error().retryable());
  hub_throttled_ = false;
  cdn_throttled_ = true;
  auto cdn = Read(*source, "big.bin", 0, out);
  ASSERT_FALSE(cdn.has_value());
  EXPECT_EQ(cdn.error().code(), ErrorCode::kThrottled);
  EXPECT_TRUE(cdn.error().retryable());
}

TEST_F(HubRangeSourceTest, ARefusedTokenIsReadAgainFreshOnce) {
  auto source = Source({"127.0.0.2"}, Token());
  std::string out(100, '\0');
  auto status = Read(*source, "private.bin", 0, out);
  ASSERT_TRUE(status.has_value()) << status.error().ToString();
  EXPECT_EQ(tokens_, 1);
  EXPECT_EQ(fresh_tokens_, 1);
  secret_token_ = "not-yet-rotated";
  auto refused = Read(*Source({"127.0.0.2"}, Token()), "private.bin", 0, out);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(fresh_tokens_, 2);
}

TEST_F(HubRangeSourceTest, AMissingFileIsNotFound) {
  std::string out(10, '\0');
  auto status = Read(*Source(), "absent.bin", 0, out);
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kNotFound);
}

TEST(HubRangeSource, ResolveUrlsFollowEachHubsConvention) {
  auto client = core::HttpClient::Create({});
  ASSERT_TRUE(client.has_value());
  std::shared_ptr<core::HttpClient> shared = std::move(*client);
  auto hugging_face = HubRangeSource::Create(shared, {.name = "hf",
                                                      .type = "huggingFace",
                                                      .endpoint = "https://huggingface.co",
                                                      .repository = "org/m",
                                                      .commit = std::string(kCommit)});
  ASSERT_TRUE(hugging_face.has_value());
  EXPECT_EQ(
      (*hugging_face)->ResolveUrl("sub dir/a+b.safetensors"),
      fmt::format("https://huggingface.co/org/m/resolve/{}/sub%20dir/a%2Bb.safetensors", kCommit));
  auto model_scope = HubRangeSource::Create(shared, {.name = "ms",
                                                     .type = "modelScope",
                                                     .endpoint = "https://www.modelscope.cn/",
                                                     .repository = "org/m",
                                                     .commit = std::string(kCommit)});
  ASSERT_TRUE(model_scope.has_value());
  EXPECT_EQ((*model_scope)->ResolveUrl("sub/a.json"),
            fmt::format("https://www.modelscope.cn/api/v1/models/org/m/repo?Revision={}&FilePath="
                        "sub%2Fa.json",
                        kCommit));
  EXPECT_FALSE(HubRangeSource::Create(shared, {.name = "x",
                                               .type = "http",
                                               .endpoint = "https://h",
                                               .repository = "o/m",
                                               .commit = std::string(kCommit)})
                   .has_value());
}

}  // namespace
}  // namespace modelplane::agent
