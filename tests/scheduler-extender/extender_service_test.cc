// The verbs end to end: decisions for managed, unmanaged and unknown pods, then the real
// HttpServer on loopback answering kube-scheduler's requests in both node forms, with the
// decision log line, 503 before sync, 400/413 for bad bodies and the latency histogram.
#include "scheduler-extender/extender_service.h"

#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "core/api/model_cache.h"
#include "core/http/http_client.h"
#include "core/http/http_server.h"
#include "scheduler-extender/verb_server_options.h"
#include "tests/core/http/test_certificates.h"
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
       .entries = {
           {kDigest, {.state = "Ready", .bytes_done = 40 * kGiB, .bytes_total = 40 * kGiB}}}});
  inventory.UpsertCache(
      {.node = "gpu-node-1",
       .has_status = true,
       .capacity_bytes = 100 * kGiB,
       .used_bytes = 20 * kGiB,
       .reserved_bytes = 20 * kGiB,
       .entries = {
           {kDigest, {.state = "Staging", .bytes_done = 20 * kGiB, .bytes_total = 40 * kGiB}}}});
  inventory.UpsertCache({.node = "gpu-node-2",
                         .has_status = true,
                         .capacity_bytes = 50 * kGiB,
                         .used_bytes = 20 * kGiB});
}

ExtenderArgs Args(std::string_view file) {
  auto args = ParseExtenderArgs(ReadTestData(std::string(file)), {});
  EXPECT_TRUE(args) << args.error().ToString();
  return args.value_or(ExtenderArgs{});
}

TEST(DecideTest, PlacesAPodNamingAKnownRevision) {
  CacheInventory inventory;
  FillInventory(inventory);
  const core::ManualClock clock;
  const PodDecision decision =
      Decide(Args("filter_node_names.json"), inventory, Placement::Default(clock));
  EXPECT_EQ(decision.outcome, PodDecision::Outcome::kPlaced);
  EXPECT_EQ(decision.revision_key, "models/llama-r1");
  EXPECT_EQ(decision.digest, kDigest);
  const FilterResult filter = ToFilterResult(decision);
  EXPECT_EQ(filter.passed, (std::vector<std::string_view>{"gpu-node-0", "gpu-node-1"}));
  ASSERT_EQ(filter.failed.size(), 1u);
  EXPECT_EQ(filter.failed[0].node, "gpu-node-2");
  EXPECT_FALSE(filter.failed[0].reason.empty());
  const auto scores = ToHostPriorities(decision);
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_EQ(scores[0].score, 10);
  EXPECT_EQ(scores[1].score, 8);  // half staged (5), room for it (10)
  EXPECT_EQ(scores[2].score, 0);
}

TEST(DecideTest, NeverFailsAPodItDoesNotManage) {
  CacheInventory inventory;
  FillInventory(inventory);
  auto expect_pass_through = [&](const ExtenderArgs& args, PodDecision::Outcome outcome) {
    const core::ManualClock clock;
    const PodDecision decision = Decide(args, inventory, Placement::Default(clock));
    EXPECT_EQ(decision.outcome, outcome);
    const FilterResult filter = ToFilterResult(decision);
    EXPECT_EQ(filter.passed,
              std::vector<std::string_view>(args.node_names.begin(), args.node_names.end()));
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

// The service behind a real HttpServer on 127.0.0.1 with the options the binary uses
// (verb_server_options.h), and a client as kube-scheduler would be.
class ExtenderHttpTest : public ::testing::Test {
 protected:
  core::ManualClock clock_;
  void SetUp() override {
    FillInventory(inventory_);
    config_.address = "127.0.0.1";
    config_.port = 0;
    config_.path_prefix = "/scheduler";
    config_.body_limit.bytes = 256ULL * 1024;
  }

  // Starts the server for config_, and a client with these TLS options (none: plain HTTP).
  void Start(std::optional<core::TlsClientOptions> client_tls = std::nullopt) {
    auto logger = core::Logger::Create({.component = "scheduler-extender",
                                        .level = core::LogLevel::kDebug,
                                        .sink = core::LogSink::Stream(log_)});
    ASSERT_TRUE(logger);
    auto service = ExtenderService::Create(inventory_, Placement::Default(clock_), *logger,
                                           metrics_, VerbServiceOptions(config_));
    ASSERT_TRUE(service) << service.error().ToString();
    service_ = std::move(*service);
    core::Router router;
    service_->AddRoutes(router, config_);
    auto options = VerbServerOptions(config_, std::nullopt, *logger);
    ASSERT_TRUE(options) << options.error().ToString();
    options->metrics = [this] { return metrics_.ExposeText(); };
    auto server = core::HttpServer::Create(std::move(*options), std::move(router));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    scheme_ = client_tls ? "https" : "http";
    core::ClientOptions client_options;
    client_options.retry.max_attempts = 1;
    client_options.tls = std::move(client_tls);
    auto client = core::HttpClient::Create(client_options);
    ASSERT_TRUE(client) << client.error().ToString();
    client_ = std::move(*client);
  }

  void TearDown() override {
    if (server_) server_->Stop();
  }

  std::string Url(const std::string& path) const {
    return scheme_ + "://127.0.0.1:" + std::to_string(server_->port()) + path;
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
  std::string scheme_ = "http";
  std::unique_ptr<ExtenderService> service_;
  std::unique_ptr<core::HttpServer> server_;
  std::unique_ptr<core::HttpClient> client_;
};

TEST_F(ExtenderHttpTest, AnswersServiceUnavailableUntilTheInventorySynced) {
  Start();
  ASSERT_FALSE(HasFatalFailure());
  auto response = Post("filter", ReadTestData("filter_node_names.json"));
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message().find("HTTP 503"), std::string::npos)
      << response.error().ToString();
  service_->SetSynced(true);
  EXPECT_TRUE(Post("filter", ReadTestData("filter_node_names.json")));
}

TEST_F(ExtenderHttpTest, FilterAndPrioritizeInNodeNamesForm) {
  Start();
  ASSERT_FALSE(HasFatalFailure());
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
            json::parse(R"([{"Host":"gpu-node-0","Score":10},{"Host":"gpu-node-1","Score":8},
                            {"Host":"gpu-node-2","Score":0}])"));

  // One structured line per decision, naming the pod, the revision and every node.
  const std::string log = log_.str();
  EXPECT_NE(log.find("filter_decided"), std::string::npos) << log;
  EXPECT_NE(log.find("pod=models/engine-1"), std::string::npos) << log;
  EXPECT_NE(log.find("revision=models/llama-r1"), std::string::npos) << log;
  EXPECT_NE(log.find("passed=gpu-node-0,gpu-node-1"), std::string::npos) << log;
  EXPECT_NE(log.find("prioritize_decided"), std::string::npos) << log;
  EXPECT_NE(log.find("scores=gpu-node-0:10,gpu-node-1:8,gpu-node-2:0"), std::string::npos) << log;
}

TEST_F(ExtenderHttpTest, FilterInNodeListFormReturnsTheNodeObjects) {
  Start();
  ASSERT_FALSE(HasFatalFailure());
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
  Start();
  ASSERT_FALSE(HasFatalFailure());
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
  Start();
  ASSERT_FALSE(HasFatalFailure());
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

TEST_F(ExtenderHttpTest, RefusesMoreCandidatesThanMaxNodes) {
  config_.max_nodes = 2;  // the golden requests name three
  Start();
  ASSERT_FALSE(HasFatalFailure());
  service_->SetSynced(true);
  for (const char* file : {"filter_node_names.json", "filter_node_list.json"}) {
    auto response = Post("filter", ReadTestData(file));
    ASSERT_FALSE(response) << file;
    EXPECT_NE(response.error().message().find("HTTP 400"), std::string::npos)
        << response.error().ToString();
  }
  EXPECT_NE(log_.str().find("more than 2 nodes"), std::string::npos) << log_.str();
}

// HTTPS with mutual TLS, as the chart configures it: kube-scheduler presents its client
// certificate and verifies the extender's against the CA.
class ExtenderTlsTest : public ExtenderHttpTest {
 protected:
  void StartTls(const std::string& client_common_name) {
    auto directory = core::testing::TemporaryDirectory::Create("extender-tls");
    ASSERT_TRUE(directory) << directory.error().ToString();
    directory_.emplace(std::move(*directory));
    auto pki = core::testing::MakeTestPki(directory_->path(), client_common_name);
    ASSERT_TRUE(pki) << pki.error().ToString();
    pki_ = *pki;
    config_.tls = {.certificate_file = pki_.server_certificate_file,
                   .private_key_file = pki_.server_key_file,
                   .client_ca_file = pki_.ca_file,
                   .client_names = {"modelplane-scheduler"}};
    Start(core::TlsClientOptions{.ca_file = pki_.ca_file,
                                 .certificate_chain_file = pki_.client_certificate_file,
                                 .private_key_file = pki_.client_key_file});
    ASSERT_FALSE(HasFatalFailure());
    service_->SetSynced(true);
  }

  core::Result<core::ClientResponse> PostWith(const core::TlsClientOptions& tls,
                                              const std::string& url) {
    core::ClientOptions options;
    options.retry.max_attempts = 1;
    options.tls = tls;
    auto client = core::HttpClient::Create(options);
    if (!client) return std::unexpected(client.error());
    core::ClientRequest request{
        .method = http::verb::post, .url = url, .body = ReadTestData("filter_node_names.json")};
    return (*client)->Fetch(request);
  }

  std::optional<core::testing::TemporaryDirectory> directory_;
  core::testing::TestPki pki_;
};

TEST_F(ExtenderTlsTest, ServesTheSchedulerOverMutualTls) {
  StartTls("modelplane-scheduler");
  ASSERT_FALSE(HasFatalFailure());
  auto response = Post("filter", ReadTestData("filter_node_names.json"));
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(json::parse(response->body)["NodeNames"],
            json::parse(R"(["gpu-node-0","gpu-node-1"])"));

  // Without a client certificate the handshake is refused; with another CA's trust the
  // extender's certificate is; plain HTTP gets nowhere.
  auto anonymous = PostWith({.ca_file = pki_.ca_file}, Url("/scheduler/filter"));
  EXPECT_FALSE(anonymous);
  auto wrong_ca = PostWith({.ca_file = pki_.other_ca_file,
                            .certificate_chain_file = pki_.client_certificate_file,
                            .private_key_file = pki_.client_key_file},
                           Url("/scheduler/filter"));
  EXPECT_FALSE(wrong_ca);
  core::ClientRequest plain{
      .method = http::verb::post,
      .url = "http://127.0.0.1:" + std::to_string(server_->port()) + "/scheduler/filter",
      .body = "{}"};
  auto plain_client = core::HttpClient::Create({.retry = {.max_attempts = 1}});
  ASSERT_TRUE(plain_client);
  EXPECT_FALSE((*plain_client)->Fetch(plain));
}

TEST_F(ExtenderTlsTest, RefusesAClientCertificateWithAnotherName) {
  StartTls("someone-else");  // signed by the same CA, but not the scheduler
  ASSERT_FALSE(HasFatalFailure());
  auto response = Post("filter", ReadTestData("filter_node_names.json"));
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message().find("HTTP 403"), std::string::npos)
      << response.error().ToString();
  EXPECT_NE(log_.str().find("event=extender_request_forbidden"), std::string::npos) << log_.str();
  EXPECT_NE(log_.str().find("CN=someone-else"), std::string::npos) << log_.str();
}

}  // namespace
}  // namespace modelplane::extender
