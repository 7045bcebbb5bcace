// The redirect follower against a real core::HttpServer on loopback: Location resolution, the
// hop limit, the caller's refusal and headers that stay home.
#include "core/http/redirect_follower.h"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "core/http/http_server.h"

namespace modelplane::core {
namespace {

namespace http = boost::beast::http;

TEST(ResolveLocation, AbsoluteSchemeRelativeRootedAndRelativeLocations) {
  const std::string from = "https://hub.example:8443/org/m/resolve/abc/dir/f.bin?x=1";
  EXPECT_EQ(ResolveLocation(from, "https://cdn.example/a?sig=1").value(),
            "https://cdn.example/a?sig=1");
  EXPECT_EQ(ResolveLocation(from, "//cdn.example/a").value(), "https://cdn.example/a");
  EXPECT_EQ(ResolveLocation(from, "/api/resolve-cache/f").value(),
            "https://hub.example:8443/api/resolve-cache/f");
  EXPECT_EQ(ResolveLocation(from, "g.bin").value(),
            "https://hub.example:8443/org/m/resolve/abc/dir/g.bin");
  EXPECT_FALSE(ResolveLocation(from, "file:///etc/passwd").has_value());
  EXPECT_FALSE(ResolveLocation(from, "/a\r\nX-Evil: 1").has_value());
}

class RedirectFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Router router;
    router.HandlePrefix(http::verb::get, "/loop", [](const ServerRequest&) {
      auto answer = ServerResponse::Text(http::status::found, "");
      answer.headers.set(http::field::location, "/loop");
      return answer;
    });
    router.HandlePrefix(http::verb::get, "/away", [this](const ServerRequest&) {
      auto answer = ServerResponse::Text(http::status::see_other, "");
      answer.headers.set(http::field::location,
                         fmt::format("http://localhost:{}/echo", server_->port()));
      return answer;
    });
    router.HandlePrefix(http::verb::get, "/echo", [](const ServerRequest& request) {
      const bool auth = request.headers.find(http::field::authorization) != request.headers.end();
      return ServerResponse::Text(http::status::ok, auth ? "with token" : "without token");
    });
    router.HandlePrefix(http::verb::get, "/coded", [](const ServerRequest&) {
      auto answer = ServerResponse::Text(http::status::too_many_requests, "slow down");
      answer.headers.set("X-Error-Code", "RateLimited");
      answer.headers.set("RateLimit", "\"resolvers\";r=0;t=2");
      return answer;
    });
    router.HandlePrefix(http::verb::get, "/bare", [](const ServerRequest&) {
      return ServerResponse::Text(http::status::found, "");
    });
    auto server = HttpServer::Create({}, std::move(router));
    ASSERT_TRUE(server.has_value()) << server.error().ToString();
    server_ = std::move(*server);
    auto client = HttpClient::Create({});
    ASSERT_TRUE(client.has_value());
    client_ = std::move(*client);
  }

  [[nodiscard]] std::string At(std::string_view path) const {
    return fmt::format("http://127.0.0.1:{}{}", server_->port(), path);
  }

  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(RedirectFollowerTest, HeadersStayWithTheFirstOriginAndHopsAreBounded) {
  ClientRequest request;
  request.url = At("/away");
  request.headers.set(http::field::authorization, "Bearer secret");
  auto away = FetchFollowing(*client_, request, 1024, {});
  ASSERT_TRUE(away.has_value()) << away.error().ToString();
  // localhost is another origin than 127.0.0.1, though the same server.
  EXPECT_EQ(away->response.body, "without token");
  EXPECT_EQ(away->final_url, fmt::format("http://localhost:{}/echo", server_->port()));

  request.url = At("/echo");
  auto home = FetchFollowing(*client_, request, 1024, {});
  ASSERT_TRUE(home.has_value());
  EXPECT_EQ(home->response.body, "with token");

  request.url = At("/loop");
  auto loop = FetchFollowing(*client_, request, 1024, {.max_redirects = 3});
  ASSERT_FALSE(loop.has_value());
  EXPECT_NE(loop.error().message().find("more than 3"), std::string::npos);

  request.url = At("/bare");
  auto bare = FetchFollowing(*client_, request, 1024, {});
  ASSERT_FALSE(bare.has_value());
  EXPECT_NE(bare.error().message().find("without a Location"), std::string::npos);
}

// Not the follower's own concern, but the answers it hands on: a failed one keeps the server's
// reason word and the wait its RateLimit header asks for.
TEST_F(RedirectFollowerTest, AFailedAnswerKeepsTheServersReasonAndItsRateLimitWait) {
  ClientRequest request;
  request.url = At("/coded");
  auto client = HttpClient::Create({.retry = {.max_attempts = 1}});
  ASSERT_TRUE(client.has_value());
  auto answer = FetchFollowing(**client, request, 1024, {});
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code(), ErrorCode::kThrottled);
  EXPECT_EQ(answer.error().server_reason(), "RateLimited");
  EXPECT_EQ(answer.error().Wrap("resolving").server_reason(), "RateLimited");
  EXPECT_EQ(answer.error().retry_after(), std::chrono::milliseconds(2000));
}

TEST_F(RedirectFollowerTest, TheCallerRefusesAHopBeforeItIsMade) {
  ClientRequest request;
  request.url = At("/away");
  RedirectRules rules;
  rules.allow = [](const core::Url& target) -> Status {
    if (target.host == "localhost") return MakeError(ErrorCode::kPermissionDenied, "not there");
    return Ok();
  };
  auto refused = FetchFollowing(*client_, request, 1024, rules);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), ErrorCode::kPermissionDenied);
  // Without redirects_as_answers the client still fails on a redirect, as before.
  auto plain = client_->Fetch(request);
  ASSERT_FALSE(plain.has_value());
  EXPECT_EQ(plain.error().http_status(), 303u);
}

}  // namespace
}  // namespace modelplane::core
