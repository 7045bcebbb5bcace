// The webhook's routes on the real HTTP server over TLS, called with the real client, as
// kube-apiserver calls them: AdmissionReview in, AdmissionReview out.
#include "operator/webhook/pod_webhook.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/http/http_client.h"
#include "core/http/http_server.h"
#include "core/text/base64.h"
#include "operator/webhook/admission_review.h"
#include "tests/core/http/test_certificates.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
namespace http = boost::beast::http;

json Revision(const std::string& name, bool revoked) {
  std::ifstream in(std::string(MODELPLANE_SOURCE_DIR) +
                   "/tests/core/api/testdata/modelrevision-from-apiserver.json");
  std::stringstream text;
  text << in.rdbuf();
  json revision = json::parse(text.str());
  revision["metadata"]["name"] = name;
  revision["metadata"]["namespace"] = "models";
  revision["spec"]["revoked"] = revoked;
  return revision;
}

// Allows what the test revision names (its object store with its Secret, its HTTP origin).
core::SourcePolicy TestPolicy() {
  return {
      .object_stores = {{.endpoint = "https://s3.us-east-1.amazonaws.com", .buckets = {"models"}}},
      .http_origins = {{.url = "https://models.example.com/"}},
      .credentials = {{.secret = "rotated", .namespaces = {"models"}}}};
}

json Review(const std::string& operation, const std::string& revision) {
  return {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
        {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
        {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
        {"namespace", "models"},
        {"operation", operation},
        {"object",
         {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"generateName", "llama-"},
            {"namespace", "models"},
            {"annotations", {{"modelplane.io/revision", revision}}}}},
          {"spec", {{"containers", json::array({{{"name", "server"}, {"image", "vllm"}}})}}}}}}}};
}

class PodWebhookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto directory = core::testing::TemporaryDirectory::Create("webhook-test");
    ASSERT_TRUE(directory);
    directory_.emplace(std::move(*directory));
    auto pki = core::testing::MakeTestPki(directory_->path());
    ASSERT_TRUE(pki) << pki.error().ToString();
    pki_ = *pki;
    revisions_.Upsert(std::make_shared<const json>(Revision("llama-r1", false)));
    revisions_.Upsert(std::make_shared<const json>(Revision("llama-bad", true)));
    auto logger = core::Logger::Create({.component = "operator.webhook",
                                        .level = core::LogLevel::kDebug,
                                        .sink = core::LogSink::Stream(log_)});
    ASSERT_TRUE(logger);
    auto webhook = PodWebhook::Create(revisions_, TestPolicy(), {}, *logger, metrics_);
    ASSERT_TRUE(webhook) << webhook.error().ToString();
    webhook_ = std::move(*webhook);
    core::ServerOptions options;
    options.tls = core::TlsServerOptions{.certificate_chain_file = pki_.server_certificate_file,
                                         .private_key_file = pki_.server_key_file};
    options.body_limit = kMaxAdmissionReviewBytes;
    core::Router router;
    webhook_->AddRoutes(router);
    auto server = core::HttpServer::Create(std::move(options), std::move(router));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    auto client = core::HttpClient::Create(
        {.tls = core::TlsClientOptions{.ca_file = pki_.ca_file}, .retry = {.max_attempts = 1}});
    ASSERT_TRUE(client);
    client_ = std::move(*client);
  }

  core::Result<core::ClientResponse> Post(const std::string& body) {
    core::ClientRequest request{.method = http::verb::post,
                                .url = "https://127.0.0.1:" + std::to_string(server_->port()) +
                                       std::string(kPodWebhookPath),
                                .body = body};
    request.headers.set(http::field::content_type, "application/json");
    return client_->Fetch(request);
  }

  json Response(const json& review) {
    auto answer = Post(review.dump());
    EXPECT_TRUE(answer) << answer.error().ToString();
    if (!answer) return json();
    const json body = json::parse(answer->body);
    EXPECT_EQ(body["apiVersion"], "admission.k8s.io/v1");
    EXPECT_EQ(body["kind"], "AdmissionReview");
    EXPECT_EQ(body["response"]["uid"], review["request"]["uid"]);
    return body["response"];
  }

  std::ostringstream log_;
  std::optional<core::testing::TemporaryDirectory> directory_;
  core::testing::TestPki pki_;
  core::ObjectStore revisions_;
  core::MetricsRegistry metrics_;
  std::unique_ptr<PodWebhook> webhook_;
  std::unique_ptr<core::HttpServer> server_;
  std::unique_ptr<core::HttpClient> client_;
};

TEST_F(PodWebhookTest, RefusesUntilTheRevisionsAreListed) {
  const json response = Response(Review("CREATE", "llama-r1"));
  EXPECT_EQ(response["allowed"], false);
  EXPECT_EQ(response["status"]["code"], 503);
}

TEST_F(PodWebhookTest, AnswersWithAPatchThatInjects) {
  webhook_->SetSynced(true);
  const json review = Review("CREATE", "llama-r1");
  const json response = Response(review);
  ASSERT_EQ(response["allowed"], true);
  ASSERT_EQ(response["patchType"], "JSONPatch");
  auto patch = core::DecodeBase64(response["patch"].get<std::string>(), "patch");
  ASSERT_TRUE(patch);
  const json pod = review["request"]["object"].patch(json::parse(*patch));
  EXPECT_EQ(pod["spec"]["schedulingGates"][0]["name"], "modelplane.io/weights");
  EXPECT_EQ(pod["spec"]["volumes"][0]["csi"]["driver"], "csi.modelplane.io");
  EXPECT_EQ(pod["spec"]["containers"][0]["volumeMounts"][0]["mountPath"], "/models/llama-r1");
  EXPECT_THAT(pod["metadata"]["annotations"]["modelplane.io/injected"].get<std::string>(),
              HasSubstr("sha256:"));
}

TEST_F(PodWebhookTest, RefusesARevokedRevisionAndWarnsOfAMissingOne) {
  webhook_->SetSynced(true);
  const json revoked = Response(Review("CREATE", "llama-bad"));
  EXPECT_EQ(revoked["allowed"], false);
  EXPECT_EQ(revoked["status"]["code"], 403);
  EXPECT_THAT(revoked["status"]["message"].get<std::string>(),
              HasSubstr("ModelRevision models/llama-bad is revoked"));
  const json missing = Response(Review("CREATE", "llama-r9"));
  EXPECT_EQ(missing["allowed"], true);
  ASSERT_TRUE(missing.contains("warnings"));
  EXPECT_THAT(missing["warnings"][0].get<std::string>(), HasSubstr("does not exist yet"));
}

TEST_F(PodWebhookTest, RefusesAPodWhoseRevisionTheSourcePolicyRefuses) {
  core::SourcePolicy narrowed = TestPolicy();
  narrowed.object_stores.clear();
  auto logger = core::Logger::Create({.component = "operator.webhook"});
  ASSERT_TRUE(logger);
  core::MetricsRegistry metrics;
  auto webhook = PodWebhook::Create(revisions_, narrowed, {}, *logger, metrics);
  ASSERT_TRUE(webhook);
  const RevisionLookup lookup = (*webhook)->Lookup("models", "llama-r1");
  EXPECT_EQ(lookup.state, RevisionLookup::State::kInvalid);
  EXPECT_THAT(lookup.problem, HasSubstr("objectStores rule"));
  EXPECT_EQ(webhook_->Lookup("models", "llama-r1").state, RevisionLookup::State::kValid);
}

TEST_F(PodWebhookTest, ALookupSaysWhichBaseAnAdapterAppliesTo) {
  const std::string base = "sha256:" + std::string(64, '2');
  json adapter = Revision("sql-lora", false);
  adapter["spec"]["base"] = {{"digest", base}, {"name", "llama-r1"}};
  adapter["spec"]["files"][0]["role"] = "adapter";
  revisions_.Upsert(std::make_shared<const json>(adapter));
  const RevisionLookup lookup = webhook_->Lookup("models", "sql-lora");
  ASSERT_EQ(lookup.state, RevisionLookup::State::kValid) << lookup.problem;
  EXPECT_EQ(lookup.base_digest, base);
  EXPECT_EQ(webhook_->Lookup("models", "llama-r1").base_digest, "") << "a base has none";
}

TEST_F(PodWebhookTest, LeavesUpdatesAlone) {
  webhook_->SetSynced(true);
  const json response = Response(Review("UPDATE", "llama-r1"));
  EXPECT_EQ(response["allowed"], true);
  EXPECT_FALSE(response.contains("patch")) << "a pod is gated only at creation";
}

TEST_F(PodWebhookTest, RefusesWhatIsNotAnAdmissionReview) {
  webhook_->SetSynced(true);
  for (const std::string& body :
       {std::string("not json"), std::string(R"({"apiVersion":"v1","kind":"Pod"})"),
        std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})"),
        std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
                        "request":{"uid":"a","uid":"b"}})")}) {
    auto answer = Post(body);
    ASSERT_FALSE(answer) << body;
    EXPECT_THAT(answer.error().message(), HasSubstr("HTTP 400")) << body;
  }
  auto deep = Post(std::string(5000, '[') + std::string(5000, ']'));
  ASSERT_FALSE(deep);
  EXPECT_THAT(deep.error().message(), HasSubstr("HTTP 400"));
  // Refused with 413 before the body is read; the client may see the reset of the connection
  // it was still writing to instead.
  EXPECT_FALSE(Post(std::string(kMaxAdmissionReviewBytes + 1, ' ')));
}

TEST_F(PodWebhookTest, CountsOutcomes) {
  webhook_->SetSynced(true);
  (void)Response(Review("CREATE", "llama-r1"));
  (void)Response(Review("CREATE", "llama-bad"));
  const std::string text = metrics_.ExposeText();
  EXPECT_THAT(text, HasSubstr("modelplane_webhook_requests_total{outcome=\"injected\"} 1"));
  EXPECT_THAT(text, HasSubstr("modelplane_webhook_requests_total{outcome=\"refused\"} 1"));
  EXPECT_THAT(text, HasSubstr("modelplane_webhook_request_duration_seconds_count 2"));
  EXPECT_THAT(log_.str(), HasSubstr("event=pod_admitted"));
  EXPECT_THAT(log_.str(), HasSubstr("outcome=refused"));
}

}  // namespace
}  // namespace modelplane::controller
