// The verbs end to end: decisions for managed, unmanaged and unknown pods, then the real
// HttpServer on loopback answering kube-scheduler's requests in both node forms, with the
// decision log line, 503 before sync, 400/413 for bad bodies and the latency histogram.
#include "scheduler-extender/extender_service.h"

#include <sstream>

#include <gtest/gtest.h>

#include "core/api/model_cache.h"
#include "core/http/http_client.h"
#include "core/http/http_server.h"
#include "tests/scheduler-extender/test_files.h"

namespace modelplane::extender {
namespace {

using nlohmann::json;
using testing::ReadTestData;
namespace http = boost::beast::http;

constexpr const char* kDigest =
    "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

// gpu-node-0 holds serving/llama-r1 Ready, gpu-node-1 is staging it halfway, gpu-node-2 has a
// cache too small for it; models/llama-r1 (the same digest) is known too.
void FillInventory(CacheInventory& inventory) {
  inventory.UpsertRevision({.key = "serving/llama-r1", .digest = kDigest, .bytes = 40 * kGiB});
  inventory.UpsertRevision({.key = "models/llama-r1", .digest = kDigest, .bytes = 40 * kGiB});
  inventory.UpsertCache(
      {.node = "gpu-node-0",
       .has_status = true,
       .capacity_bytes = 100 * kGiB,
       .used_bytes = 90 * kGiB,
       .revisions = {
           {kDigest, {.state = "Ready", .bytes_done = 40 * kGiB, .bytes_total = 40 * kGiB}}}});
  inventory.UpsertCache(
      {.node = "gpu-node-1",
       .has_status = true,
       .capacity_bytes = 100 * kGiB,
       .used_bytes = 20 * kGiB,
       .reserved_bytes = 20 * kGiB,
       .revisions = {
           {kDigest, {.state = "Staging", .bytes_done = 20 * kGiB, .bytes_total = 40 * kGiB}}}});
  inventory.UpsertCache({.node = "gpu-node-2",
                         .has_status = true,
                         .capacity_bytes = 50 * kGiB,
                         .used_bytes = 20 * kGiB});
}

ExtenderArgs Args(std::string_view file) {
  auto args =
      ParseExtenderArgs(ReadTestData(std::string(file)), {.max_bytes = 1 << 20, .max_depth = 64});
  EXPECT_TRUE(args) << args.error().ToString();
  return args.value_or(ExtenderArgs{});
}

TEST(DecideTest, PlacesAPodNamingAKnownRevision) {
  CacheInventory inventory;
  FillInventory(inventory);
  const PodDecision decision =
      Decide(Args("filter_node_names.json"), inventory, Placement::Default());
  EXPECT_EQ(decision.outcome, PodDecision::Outcome::kPlaced);
  EXPECT_EQ(decision.revision_key, "models/llama-r1");
  EXPECT_EQ(decision.digest, kDigest);
  const FilterResult filter = ToFilterResult(decision);
  EXPECT_EQ(filter.passed, (std::vector<std::string>{"gpu-node-0", "gpu-node-1"}));
  ASSERT_EQ(filter.failed.count("gpu-node-2"), 1u);
  const auto scores = ToHostPriorities(decision);
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_EQ(scores[0].score, 10);
  EXPECT_EQ(scores[1].score, 5);
  EXPECT_EQ(scores[2].score, 0);
}

TEST(DecideTest, NeverFailsAPodItDoesNotManage) {
  CacheInventory inventory;
  FillInventory(inventory);
  auto expect_pass_through = [&](const ExtenderArgs& args, PodDecision::Outcome outcome) {
    const PodDecision decision = Decide(args, inventory, Placement::Default());
    EXPECT_EQ(decision.outcome, outcome);
    const FilterResult filter = ToFilterResult(decision);
    EXPECT_EQ(filter.passed, args.node_names);
    EXPECT_TRUE(filter.failed.empty());
    for (const HostPriority& priority : ToHostPriorities(decision)) EXPECT_EQ(priority.score, 0);
  };
  expect_pass_through(Args("unmanaged_node_names.json"), PodDecision::Outcome::kUnmanaged);

  ExtenderArgs unknown = Args("filter_node_names.json");
  unknown.pod.annotations["modelplane.io/revision"] = "models/no-such-revision";
  expect_pass_through(unknown, PodDecision::Outcome::kUnknownRevision);

  ExtenderArgs malformed = Args("filter_node_names.json");
  malformed.pod.annotations["modelplane.io/revision"] = "a/b/c";
  expect_pass_through(malformed, PodDecision::Outcome::kMalformed);
}

// The service behind a real HttpServer on 127.0.0.1, and a client as kube-scheduler would be.
class ExtenderHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FillInventory(inventory_);
    auto logger = core::Logger::Create({.component = "scheduler-extender",
                                        .level = core::LogLevel::kDebug,
                                        .sink = core::LogSink::Stream(log_)});
    ASSERT_TRUE(logger);
    auto service = ExtenderService::Create(inventory_, Placement::Default(), *logger, metrics_,
                                           {.body_limit = 256ULL * 1024});
    ASSERT_TRUE(service) << service.error().ToString();
    service_ = std::move(*service);
    config_.path_prefix = "/scheduler";
    core::Router router;
    service_->AddRoutes(router, config_);
    core::ServerOptions options;
    options.address = "127.0.0.1";
    options.port = 0;
    options.body_limit = 256ULL * 1024;
    options.metrics = [this] { return metrics_.ExposeText(); };
    auto server = core::HttpServer::Create(options, std::move(router));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    core::ClientOptions client_options;
    client_options.retry.max_attempts = 1;
    auto client = core::HttpClient::Create(client_options);
    ASSERT_TRUE(client) << client.error().ToString();
    client_ = std::move(*client);
  }

  void TearDown() override {
    if (server_) server_->Stop();
  }

  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + path;
  }

  core::Result<core::ClientResponse> Post(const std::string& verb, std::string body) {
    core::ClientRequest request{
        .method = http::verb::post, .url = Url("/scheduler/" + verb), .body = std::move(body)};
    request.headers.set(http::field::content_type, "application/json");
    return client_->Fetch(request);
  }

  std::ostringstream log_;
  core::MetricsRegistry metrics_;
  CacheInventory inventory_;
  ExtenderServerConfig config_;
  std::unique_ptr<ExtenderService> service_;
  std::unique_ptr<core::HttpServer> server_;
  std::unique_ptr<core::HttpClient> client_;
};

TEST_F(ExtenderHttpTest, AnswersServiceUnavailableUntilTheInventorySynced) {
  auto response = Post("filter", ReadTestData("filter_node_names.json"));
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message().find("HTTP 503"), std::string::npos)
      << response.error().ToString();
  service_->SetSynced(true);
  EXPECT_TRUE(Post("filter", ReadTestData("filter_node_names.json")));
}

TEST_F(ExtenderHttpTest, FilterAndPrioritizeInNodeNamesForm) {
  service_->SetSynced(true);
  auto filter = Post("filter", ReadTestData("filter_node_names.json"));
  ASSERT_TRUE(filter) << filter.error().ToString();
  EXPECT_EQ(filter->headers[http::field::content_type], "application/json");
  const json result = json::parse(filter->body);
  EXPECT_TRUE(result["Nodes"].is_null());
  EXPECT_EQ(result["NodeNames"], json::parse(R"(["gpu-node-0","gpu-node-1"])"));
  ASSERT_TRUE(result["FailedNodes"].contains("gpu-node-2"));
  EXPECT_EQ(result["FailedAndUnresolvableNodes"], json::object());
  EXPECT_EQ(result["Error"], "");

  auto prioritize = Post("prioritize", ReadTestData("filter_node_names.json"));
  ASSERT_TRUE(prioritize) << prioritize.error().ToString();
  EXPECT_EQ(json::parse(prioritize->body),
            json::parse(R"([{"Host":"gpu-node-0","Score":10},{"Host":"gpu-node-1","Score":5},
                            {"Host":"gpu-node-2","Score":0}])"));

  // One structured line per decision, naming the pod, the revision and every node.
  const std::string log = log_.str();
  EXPECT_NE(log.find("filter_decided"), std::string::npos) << log;
  EXPECT_NE(log.find("pod=serving/engine-1"), std::string::npos) << log;
  EXPECT_NE(log.find("revision=models/llama-r1"), std::string::npos) << log;
  EXPECT_NE(log.find("passed=gpu-node-0,gpu-node-1"), std::string::npos) << log;
  EXPECT_NE(log.find("prioritize_decided"), std::string::npos) << log;
  EXPECT_NE(log.find("scores=gpu-node-0:10,gpu-node-1:5,gpu-node-2:0"), std::string::npos) << log;
}

TEST_F(ExtenderHttpTest, FilterInNodeListFormReturnsTheNodeObjects) {
  service_->SetSynced(true);
  const std::string body = ReadTestData("filter_node_list.json");
  auto filter = Post("filter", body);
  ASSERT_TRUE(filter) << filter.error().ToString();
  const json result = json::parse(filter->body);
  const json sent = json::parse(body)["Nodes"]["items"];
  EXPECT_TRUE(result["NodeNames"].is_null());
  ASSERT_EQ(result["Nodes"]["items"].size(), 2u);
  EXPECT_EQ(result["Nodes"]["items"][0], sent[0]);
  EXPECT_EQ(result["Nodes"]["items"][1], sent[1]);
  EXPECT_TRUE(result["FailedNodes"].contains("gpu-node-2"));
  EXPECT_NE(log_.str().find("form=list"), std::string::npos);
}

TEST_F(ExtenderHttpTest, RejectsMalformedAndOversizedBodies) {
  service_->SetSynced(true);
  auto bad = Post("filter", R"({"Pod":{"metadata":{"name":"p"}}})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("HTTP 400"), std::string::npos) << bad.error().ToString();
  auto huge = Post("prioritize", std::string(std::size_t{300} * 1024, ' '));
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message().find("HTTP 413"), std::string::npos) << huge.error().ToString();
  core::ClientRequest get{.url = Url("/scheduler/filter")};
  auto wrong_method = client_->Fetch(get);
  ASSERT_FALSE(wrong_method);
  EXPECT_NE(wrong_method.error().message().find("HTTP 405"), std::string::npos);
}

TEST_F(ExtenderHttpTest, RecordsLatencyPerVerbOnMetrics) {
  service_->SetSynced(true);
  ASSERT_TRUE(Post("filter", ReadTestData("filter_node_names.json")));
  ASSERT_TRUE(Post("filter", ReadTestData("unmanaged_node_names.json")));
  ASSERT_TRUE(Post("prioritize", ReadTestData("filter_node_list.json")));
  auto metrics = client_->Fetch({.url = Url("/metrics")});
  ASSERT_TRUE(metrics) << metrics.error().ToString();
  const std::string& text = metrics->body;
  EXPECT_NE(text.find("# TYPE modelplane_extender_request_duration_seconds histogram"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("modelplane_extender_request_duration_seconds_count{verb=\"filter\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("modelplane_extender_request_duration_seconds_count{verb=\"prioritize\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("modelplane_extender_requests_total{verb=\"filter\",outcome=\"unmanaged\"} 1"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace modelplane::extender
