#include "node-agent/sources/revision_sources.h"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "core/api/source_identity.h"
#include "core/config/config_loader.h"
#include "core/http/http_server.h"
#include "core/policy/source_policy.h"
#include "node-agent/sources/identified_source.h"
#include "node-agent/sources/s3_range_source.h"
#include "test_files.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;
using testing::TempFolder;

core::api::ModelSource ObjectStore(std::string name, std::optional<std::string> secret = {}) {
  core::api::ModelSource source;
  source.name = std::move(name);
  source.type = "objectStore";
  source.object_store = core::api::ObjectStoreLocation{
      .endpoint = "http://127.0.0.1:9000", .bucket = "models", .prefix = "llama/r1/", .region = ""};
  if (secret) source.credentials_secret_ref = core::api::SecretReference{*secret};
  return source;
}

SourceEnvironment Environment(std::shared_ptr<CredentialSecrets> secrets = nullptr) {
  SourceEnvironment environment;
  environment.secrets = std::move(secrets);
  environment.environment = [](std::string_view name) -> std::optional<std::string> {
    if (name == "AWS_ACCESS_KEY_ID") return "env-key";
    if (name == "AWS_SECRET_ACCESS_KEY") return "env-secret";
    if (name == "AWS_REGION") return "eu-central-1";
    return std::nullopt;
  };
  return environment;
}

TEST(CreateRevisionSources, BuildsOneSourcePerEntryInOrder) {
  TempFolder shared;
  core::api::ModelSource http;
  http.name = "origin";
  http.type = "http";
  http.http = core::api::HttpLocation{"https://models.example.com/llama/r1"};
  core::api::ModelSource nfs;
  nfs.name = "nfs";
  nfs.type = "sharedFilesystem";
  nfs.shared_filesystem = core::api::SharedFilesystemLocation{shared.path()};
  nfs.capacity = core::api::SourceCapacity{.max_concurrent_fetches = 3};
  const std::vector<core::api::ModelSource> spec = {ObjectStore("s3"), http, nfs};
  auto sources = CreateRevisionSources(spec, OperatorNamedGrants(spec), Environment());
  ASSERT_TRUE(sources.has_value()) << sources.error().ToString();
  ASSERT_EQ(sources->size(), 3u);
  EXPECT_EQ((*sources)[0]->tier(), "objectStore");
  EXPECT_EQ((*sources)[0]->name(), "objectStore/s3");
  EXPECT_EQ((*sources)[0]->max_concurrency(), 16u);
  EXPECT_EQ((*sources)[1]->tier(), "http");
  EXPECT_EQ((*sources)[1]->name(), "http/origin");
  EXPECT_EQ((*sources)[2]->tier(), "sharedFilesystem");
  EXPECT_EQ((*sources)[2]->max_concurrency(), 3u);
  // Each counts against the identity of the storage behind it, not the source's name.
  EXPECT_EQ((*sources)[0]->admission_key(), core::api::SourceIdentity(spec[0]));
  EXPECT_EQ((*sources)[1]->admission_key(), "http/https://models.example.com");
  EXPECT_EQ((*sources)[2]->admission_key(), "sharedFilesystem/" + shared.path());
  auto* identified = dynamic_cast<IdentifiedSource*>((*sources)[0].get());
  ASSERT_NE(identified, nullptr);
  auto* s3 = dynamic_cast<S3RangeSource*>(&identified->inner());
  ASSERT_NE(s3, nullptr);
  EXPECT_EQ(s3->KeyFor("model.safetensors"), "llama/r1/model.safetensors");
}

TEST(CreateS3ClientForSource, RegionAndEndpointDefaults) {
  auto source = ObjectStore("s3");
  const core::SourceGrant node_credentials{.node_credentials = true};
  auto client = CreateS3ClientForSource(source, node_credentials, Environment());
  ASSERT_TRUE(client.has_value()) << client.error().ToString();
  EXPECT_EQ((*client)->region(), "eu-central-1");
  source.object_store->endpoint = "";
  source.object_store->region = "us-west-2";
  auto aws = CreateS3ClientForSource(source, node_credentials, Environment());
  ASSERT_TRUE(aws.has_value());
  EXPECT_EQ((*aws)->endpoint(), "https://s3.us-west-2.amazonaws.com");
}

TEST(CreateS3ClientForSource, SecretDirectoryPerSecretName) {
  TempFolder secrets;
  secrets.Write("s3-models-readonly/accessKeyId", "dir-key");
  secrets.Write("s3-models-readonly/secretAccessKey", "dir-secret");
  // Even a grant that lends the node's credentials never replaces a named Secret with them.
  const core::SourceGrant grant{.node_credentials = true};
  const auto directory = std::make_shared<DirectorySecrets>(secrets.path());
  auto found = CreateS3ClientForSource(ObjectStore("s3", "s3-models-readonly"), grant,
                                       Environment(directory));
  ASSERT_TRUE(found.has_value()) << found.error().ToString();
  auto missing =
      CreateS3ClientForSource(ObjectStore("s3", "other-secret"), grant, Environment(directory));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message().find("other-secret"), std::string::npos);
  auto no_directory =
      CreateS3ClientForSource(ObjectStore("s3", "s3-models-readonly"), grant, Environment());
  ASSERT_FALSE(no_directory.has_value());
  EXPECT_NE(no_directory.error().message().find("credentials is not configured"),
            std::string::npos);
}

// Records what it was asked; answers fixed keys.
class RecordingSecrets final : public CredentialSecrets {
 public:
  core::Result<SigningCredentials> Read(const std::string& namespace_name, const std::string& name,
                                        bool fresh) override {
    asked.push_back(fmt::format("{}/{}{}", namespace_name, name, fresh ? " fresh" : ""));
    return SigningCredentials{.access_key_id = "k", .secret_access_key = "s"};
  }
  core::Result<std::string> ReadToken(const std::string& namespace_name, const std::string& name,
                                      bool fresh) override {
    asked.push_back(fmt::format("{}/{}{} token", namespace_name, name, fresh ? " fresh" : ""));
    return std::string("hub-token");
  }
  std::vector<std::string> asked;
};

TEST(CreateS3ClientForSource, TheSecretIsReadInTheNamespaceItsGrantNames) {
  const auto secrets = std::make_shared<RecordingSecrets>();
  auto client = CreateS3ClientForSource(ObjectStore("s3", "keys"),
                                        {.node_credentials = true, .secret_namespace = "team-a"},
                                        Environment(secrets));
  ASSERT_TRUE(client.has_value()) << client.error().ToString();
  EXPECT_EQ(secrets->asked, std::vector<std::string>{"team-a/keys"});
}

TEST(CreateS3ClientForSource, TheNodesCredentialsOnlyWithAGrantThatLendsThem) {
  auto refused = CreateS3ClientForSource(ObjectStore("s3"), {}, Environment());
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_TRUE(
      CreateS3ClientForSource(ObjectStore("s3"), {.node_credentials = true}, Environment()));
}

TEST(CreateRevisionSources, AGrantPerSourceIsRequired) {
  auto sources = CreateRevisionSources({ObjectStore("s3")}, {}, Environment());
  ASSERT_FALSE(sources.has_value());
  EXPECT_EQ(sources.error().code(), ErrorCode::kInternal);
}

TEST(CreateRevisionSources, TypeWithoutLocationIsInvalid) {
  core::api::ModelSource broken;
  broken.name = "b";
  broken.type = "http";
  auto sources = CreateRevisionSources({broken}, OperatorNamedGrants({broken}), Environment());
  ASSERT_FALSE(sources.has_value());
  EXPECT_EQ(sources.error().code(), ErrorCode::kInvalidArgument);
}

TEST(S3ClientUrls, PathAndVirtualHostedStyle) {
  S3ClientOptions options{.endpoint = "https://s3.eu-west-1.amazonaws.com",
                          .region = "eu-west-1",
                          .credentials = {.access_key_id = "a", .secret_access_key = "s"}};
  auto path_style = S3Client::Create(options);
  ASSERT_TRUE(path_style.has_value()) << path_style.error().ToString();
  EXPECT_EQ((*path_style)->ObjectUrl("models", "llama 3/ü.safetensors"),
            "https://s3.eu-west-1.amazonaws.com/models/llama%203/%C3%BC.safetensors");
  EXPECT_EQ((*path_style)->ObjectUrl("models", "", {{"prefix", "a b/"}, {"list-type", "2"}}),
            "https://s3.eu-west-1.amazonaws.com/models?list-type=2&prefix=a%20b%2F");
  options.addressing = S3AddressingStyle::kVirtualHosted;
  options.endpoint = "http://minio.local:9000";
  auto virtual_hosted = S3Client::Create(options);
  ASSERT_TRUE(virtual_hosted.has_value());
  EXPECT_EQ((*virtual_hosted)->ObjectUrl("models", "a/b c"),
            "http://models.minio.local:9000/a/b%20c");
  EXPECT_EQ((*virtual_hosted)->ObjectUrl("models", ""), "http://models.minio.local:9000/");
}

TEST(S3ClientCreate, RejectsEndpointsWithPathsAndMissingCredentials) {
  EXPECT_FALSE(S3Client::Create({.endpoint = "http://x:9000/base",
                                 .credentials = {.access_key_id = "a", .secret_access_key = "s"}}));
  auto anonymous = S3Client::Create({.endpoint = "http://x:9000"});
  ASSERT_FALSE(anonymous.has_value());
  EXPECT_EQ(anonymous.error().code(), ErrorCode::kUnauthenticated);
}

TEST(MapS3Error, UsesTheS3CodeAndQuotesIt) {
  const auto http_error = [](ErrorCode code, unsigned status, std::string s3_code) {
    return core::Error(code,
                       fmt::format("HTTP {} from http://x/b/k: <?xml version=\"1.0\"?><Error>"
                                   "<Code>{}</Code><Message>m</Message></Error>",
                                   status, s3_code),
                       false);
  };
  const auto mapped =
      MapS3Error(http_error(ErrorCode::kNotFound, 404, "NoSuchKey"), "GetObject b/k");
  EXPECT_EQ(mapped.code(), ErrorCode::kNotFound);
  EXPECT_NE(mapped.message().find("NoSuchKey"), std::string::npos);
  EXPECT_NE(mapped.message().find("GetObject b/k"), std::string::npos);
  EXPECT_EQ(MapS3Error(http_error(ErrorCode::kPermissionDenied, 403, "SignatureDoesNotMatch"), "x")
                .code(),
            ErrorCode::kUnauthenticated);
  EXPECT_EQ(MapS3Error(http_error(ErrorCode::kPermissionDenied, 403, "AccessDenied"), "x").code(),
            ErrorCode::kPermissionDenied);
  EXPECT_EQ(MapS3Error(http_error(ErrorCode::kInvalidArgument, 400, "NoSuchBucket"), "x").code(),
            ErrorCode::kNotFound);
  const auto slow = MapS3Error(http_error(ErrorCode::kUnavailable, 503, "SlowDown"), "x");
  EXPECT_EQ(slow.code(), ErrorCode::kThrottled);
  EXPECT_TRUE(slow.retryable());
  const auto head = MapS3Error(core::Error(ErrorCode::kNotFound, "HTTP 404 from http://x/b/k: "),
                               "HeadObject b/k");
  EXPECT_EQ(head.code(), ErrorCode::kNotFound);
}

// DNS rebinding at the source level: an object store and an origin the policy allows by a name
// that resolves to loopback. Without `addresses` the reads fail with kAddressDenied, not
// retryable, and the loopback listener accepts nothing; with 127.0.0.0/8 listed they connect.
TEST(CreateRevisionSources, ObjectStoresAndOriginsConnectOnlyToAddressesTheirRuleAllows) {
  core::Router router;
  router.HandlePrefix(boost::beast::http::verb::get, "/", [](const core::ServerRequest&) {
    return core::ServerResponse::Text(boost::beast::http::status::not_found, "nothing here");
  });
  auto server = core::HttpServer::Create({.threads = 2}, std::move(router));
  ASSERT_TRUE(server) << server.error().ToString();
  const std::string origin = fmt::format("http://localhost:{}", (*server)->port());
  core::api::ModelSource store = ObjectStore("s3");
  store.object_store->endpoint = origin;
  const std::vector<core::api::ModelSource> spec = {
      store,
      {.name = "origin",
       .type = "http",
       .http = core::api::HttpLocation{.base_url = origin + "/files"}}};
  const auto read_each = [&](const std::string& addresses) {
    auto policy = core::LoadConfigString<core::SourcePolicy>(fmt::format(
        "objectStores: [{{endpoint: \"{0}\", buckets: [models], nodeCredentials: true{1}}}]\n"
        "httpOrigins: [{{url: \"{0}/\"{1}}}]\n",
        origin, addresses));
    EXPECT_TRUE(policy) << policy.error().ToString();
    auto grants = core::AuthorizeSources(&*policy, "team-a", spec);
    EXPECT_TRUE(grants) << grants.error().ToString();
    auto sources = CreateRevisionSources(spec, *grants, Environment());
    EXPECT_TRUE(sources) << sources.error().ToString();
    std::vector<core::Error> errors;
    for (const auto& source : *sources) {
      std::string out(16, '\0');
      auto status = source->ReadRange({.path = "model.safetensors", .size = 16}, 0,
                                      {reinterpret_cast<std::byte*>(out.data()), out.size()}, {});
      EXPECT_FALSE(status) << "the listener serves nothing";
      if (!status) errors.push_back(status.error());
    }
    return errors;
  };

  const std::vector<core::Error> refused = read_each("");
  ASSERT_EQ(refused.size(), 2U);
  for (const core::Error& error : refused) {
    EXPECT_EQ(error.code(), ErrorCode::kAddressDenied) << error.ToString();
    EXPECT_FALSE(error.retryable()) << error.ToString();
  }
  EXPECT_EQ((*server)->stats().accepted_connections, 0U);

  const std::vector<core::Error> allowed = read_each(", addresses: [127.0.0.0/8]");
  ASSERT_EQ(allowed.size(), 2U);
  for (const core::Error& error : allowed) {
    EXPECT_EQ(error.code(), ErrorCode::kNotFound) << error.ToString();
  }
  EXPECT_GE((*server)->stats().accepted_connections, 2U);
}

}  // namespace
}  // namespace modelplane::agent
