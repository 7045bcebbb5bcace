#include "core/policy/source_policy.h"

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/config_loader.h"

namespace modelplane::core {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kPolicy = R"(
credentialsNamespace: modelplane
sharedFilesystems:
  - root: /mnt/models
    namespaces: [team-a]
  - root: /mnt/public
objectStores:
  - endpoint: http://MinIO.example:9000
    buckets: [models]
    nodeCredentials: true
  - buckets: ["*"]
    namespaces: [team-b]
httpOrigins:
  - url: https://huggingface.co/org/
hubs:
  - endpoint: https://huggingface.co
    repositories: ["meta-llama/*", "Qwen/Qwen3-8B"]
    redirectHosts: [cdn-lfs.hf.co, "*.XetHub.hf.co"]
  - endpoint: http://127.0.0.1:8080
    namespaces: [team-a]
    addresses: [127.0.0.0/8]
credentials:
  - secret: models-readonly
    namespaces: [team-a]
)";

SourcePolicy Policy() {
  auto policy = LoadConfigString<SourcePolicy>(kPolicy);
  EXPECT_TRUE(policy) << policy.error().ToString();
  return *policy;
}

api::ModelSource Shared(std::string path) {
  return {.name = "nfs",
          .type = std::string(api::kSourceSharedFilesystem),
          .shared_filesystem = api::SharedFilesystemLocation{.path = std::move(path)}};
}

api::ModelSource Store(std::string endpoint, std::string bucket,
                       std::optional<std::string> secret = std::nullopt) {
  api::ModelSource source{.name = "s3",
                          .type = std::string(api::kSourceObjectStore),
                          .object_store = api::ObjectStoreLocation{}};
  source.object_store->endpoint = std::move(endpoint);
  source.object_store->bucket = std::move(bucket);
  if (secret) source.credentials_secret_ref = api::SecretReference{.name = *secret};
  return source;
}

api::ModelSource Http(std::string url) {
  return {.name = "hf",
          .type = std::string(api::kSourceHttp),
          .http = api::HttpLocation{.base_url = std::move(url)}};
}

api::ModelSource Hub(std::string repository, std::string endpoint = "",
                     std::optional<std::string> secret = std::nullopt) {
  api::ModelSource source{.name = "hub", .type = std::string(api::kSourceHuggingFace)};
  source.hugging_face = api::HubLocation{.endpoint = std::move(endpoint),
                                         .repository = std::move(repository),
                                         .commit = std::string(40, 'a')};
  if (secret) source.credentials_secret_ref = api::SecretReference{.name = *secret};
  return source;
}

std::string Refusal(const SourcePolicy& policy, std::string_view namespace_name,
                    const api::ModelSource& source) {
  auto grants = AuthorizeSources(&policy, namespace_name, {source});
  if (grants) return "";
  EXPECT_EQ(grants.error().code(), ErrorCode::kPermissionDenied);
  return grants.error().message();
}

TEST(SourcePolicyTest, SharedFilesystemPathsMustLieBelowAnAllowedRoot) {
  const SourcePolicy policy = Policy();
  auto grants = AuthorizeSources(&policy, "team-a", {Shared("/mnt/models/llama")});
  ASSERT_TRUE(grants) << grants.error().ToString();
  EXPECT_EQ((*grants)[0].confine_root, "/mnt/models");
  EXPECT_EQ(Refusal(policy, "team-a", Shared("/mnt/models")), "");
  EXPECT_EQ(Refusal(policy, "anyone", Shared("/mnt/public/x")), "");

  EXPECT_THAT(Refusal(policy, "team-a", Shared("/var/run/secrets/kubernetes.io")),
              HasSubstr("below no sharedFilesystems root"));
  EXPECT_THAT(Refusal(policy, "team-b", Shared("/mnt/models/llama")),
              HasSubstr("namespace \"team-b\""));
  EXPECT_THAT(Refusal(policy, "team-a", Shared("/mnt/modelsevil")), HasSubstr("below no"));
  EXPECT_THAT(Refusal(policy, "team-a", Shared("/mnt/models/../../etc")), HasSubstr("'..'"));
  EXPECT_THAT(Refusal(policy, "team-a", Shared("mnt/models")), HasSubstr("absolute"));
  EXPECT_THAT(Refusal(policy, "team-a", Shared("/mnt/models/")), HasSubstr("end with '/'"));
}

TEST(SourcePolicyTest, ObjectStoresNeedAMatchingEndpointBucketAndCredentials) {
  const SourcePolicy policy = Policy();
  auto grants =
      AuthorizeSources(&policy, "team-a", {Store("http://minio.example:9000/", "models")});
  ASSERT_TRUE(grants) << grants.error().ToString();
  EXPECT_TRUE((*grants)[0].node_credentials);

  EXPECT_THAT(Refusal(policy, "team-a", Store("http://minio.example:9000", "other")),
              HasSubstr("matches no objectStores rule"));
  EXPECT_THAT(Refusal(policy, "team-a", Store("http://169.254.169.254", "models")),
              HasSubstr("matches no objectStores rule"));
  EXPECT_THAT(Refusal(policy, "team-a", Store("http://minio.example:9000/x", "models")),
              HasSubstr("must not carry a path"));
  // The AWS rule is team-b's, and it does not lend the agent's own credentials.
  EXPECT_THAT(Refusal(policy, "team-a", Store("", "any")), HasSubstr("no objectStores rule"));
  EXPECT_THAT(Refusal(policy, "team-b", Store("", "any")), HasSubstr("nodeCredentials"));
}

TEST(SourcePolicyTest, CredentialSecretsBelongToTheirNamespaceUnlessGranted) {
  const SourcePolicy policy = Policy();
  // A revision's own namespace's Secret needs no rule, and the grant says where it lives.
  auto own = AuthorizeSources(&policy, "team-b", {Store("", "any", "team-b-keys")});
  ASSERT_TRUE(own) << own.error().ToString();
  EXPECT_EQ((*own)[0].secret_namespace, "team-b");
  EXPECT_FALSE((*own)[0].node_credentials);

  // Another namespace's Secret: only the one a rule grants, to the namespaces it lists.
  api::ModelSource shared = Store("", "any", "models-readonly");
  shared.credentials_secret_ref->namespace_name = "modelplane";
  EXPECT_THAT(Refusal(policy, "team-b", shared),
              HasSubstr("\"modelplane/models-readonly\" is another namespace's Secret, granted "
                        "to namespace \"team-b\" by no credentials rule"));
  SourcePolicy granted = policy;
  granted.object_stores.push_back({.buckets = {"*"}});
  auto lent = AuthorizeSources(&granted, "team-a", {shared});
  ASSERT_TRUE(lent) << lent.error().ToString();
  EXPECT_EQ((*lent)[0].secret_namespace, "modelplane");
  // The rule names a Secret in one namespace, not that name in every namespace.
  api::ModelSource elsewhere = shared;
  elsewhere.credentials_secret_ref->namespace_name = "team-c";
  EXPECT_THAT(Refusal(granted, "team-a", elsewhere), HasSubstr("by no credentials rule"));
  api::ModelSource other = shared;
  other.credentials_secret_ref->name = "other-team";
  EXPECT_THAT(Refusal(granted, "team-a", other), HasSubstr("by no credentials rule"));
  EXPECT_THAT(Refusal(granted, "team-a", Store("", "b", "../peer-token")),
              HasSubstr("not a Secret name"));
  api::ModelSource bad_namespace = shared;
  bad_namespace.credentials_secret_ref->namespace_name = "a.b";
  EXPECT_THAT(Refusal(granted, "team-a", bad_namespace), HasSubstr("not a namespace name"));
  // secretNamespace in a rule overrides credentialsNamespace.
  granted.credentials.push_back(
      {.secret = "vault-keys", .secret_namespace = "keys", .namespaces = {"team-b"}});
  api::ModelSource vault = Store("", "b", "vault-keys");
  vault.credentials_secret_ref->namespace_name = "keys";
  EXPECT_EQ(Refusal(granted, "team-b", vault), "");
  EXPECT_THAT(Refusal(granted, "team-a", vault), HasSubstr("by no credentials rule"));
}

TEST(SourcePolicyTest, HttpOriginsMatchSchemeHostPortAndPathPrefix) {
  const SourcePolicy policy = Policy();
  EXPECT_EQ(Refusal(policy, "x", Http("https://HuggingFace.co/org/model/resolve/main")), "");
  EXPECT_EQ(Refusal(policy, "x", Http("https://huggingface.co:443/org")), "");
  EXPECT_THAT(Refusal(policy, "x", Http("https://huggingface.co/organisation")),
              HasSubstr("no httpOrigins rule"));
  EXPECT_THAT(Refusal(policy, "x", Http("http://huggingface.co/org/m")),
              HasSubstr("no httpOrigins rule"));
  EXPECT_THAT(Refusal(policy, "x", Http("https://huggingface.co:8443/org/m")),
              HasSubstr("no httpOrigins rule"));
  EXPECT_THAT(Refusal(policy, "x", Http("http://127.0.0.1:10250/pods")),
              HasSubstr("no httpOrigins rule"));
  EXPECT_THAT(Refusal(policy, "x", Http("https://huggingface.co/org/../admin")), HasSubstr("'..'"));
  EXPECT_THAT(Refusal(policy, "x", Http("https://huggingface.co/org/%2E%2E/admin")),
              HasSubstr("encoded"));
  EXPECT_THAT(Refusal(policy, "x", Http("https://user@huggingface.co/org/m")),
              HasSubstr("http.baseUrl"));
}

TEST(SourcePolicyTest, HubsMatchEndpointRepositoryAndNamespace) {
  const SourcePolicy policy = Policy();
  EXPECT_EQ(Refusal(policy, "x", Hub("meta-llama/Llama-3.1-8B")), "");
  EXPECT_EQ(Refusal(policy, "x", Hub("Qwen/Qwen3-8B", "https://HuggingFace.co/")), "");
  EXPECT_THAT(Refusal(policy, "x", Hub("Qwen/Qwen3-32B")), HasSubstr("no hubs rule"));
  EXPECT_THAT(Refusal(policy, "x", Hub("meta-llama")), HasSubstr("no hubs rule"));
  EXPECT_THAT(Refusal(policy, "x", Hub("meta-llama/m", "https://hf-mirror.com")),
              HasSubstr("no hubs rule"));
  // A mirror rule without repositories allows any, for its namespaces only.
  EXPECT_EQ(Refusal(policy, "team-a", Hub("any/thing", "http://127.0.0.1:8080")), "");
  EXPECT_THAT(Refusal(policy, "team-b", Hub("any/thing", "http://127.0.0.1:8080")),
              HasSubstr("no hubs rule for namespace \"team-b\""));
  // A token Secret follows the same rules as an object store's keys.
  EXPECT_EQ(Refusal(policy, "team-a", Hub("any/thing", "http://127.0.0.1:8080", "hf-token")), "");
  EXPECT_THAT(Refusal(policy, "team-a", Hub("meta-llama/m", "", "Bad_Name")),
              HasSubstr("not a Secret name"));

  auto grants = AuthorizeSources(&policy, "x", {Hub("meta-llama/m")});
  ASSERT_TRUE(grants) << grants.error().ToString();
  EXPECT_EQ(grants->front().redirect_hosts,
            (std::vector<std::string>{"cdn-lfs.hf.co", "*.xethub.hf.co"}));
  auto local = AuthorizeSources(&policy, "team-a", {Hub("o/m", "http://127.0.0.1:8080")});
  ASSERT_TRUE(local);
  ASSERT_TRUE(local->front().addresses.has_value());
}

TEST(SourcePolicyTest, RedirectHostsMatchExactNamesAndNamesBelowAWildcard) {
  const std::vector<std::string> hosts = {"cdn-lfs.hf.co", "*.xethub.hf.co", "127.0.0.2"};
  EXPECT_TRUE(HostMatches("cdn-lfs.hf.co", hosts));
  EXPECT_TRUE(HostMatches("cas-bridge.xethub.hf.co", hosts));
  EXPECT_TRUE(HostMatches("127.0.0.2", hosts));
  EXPECT_FALSE(HostMatches("xethub.hf.co", hosts));
  EXPECT_FALSE(HostMatches("evil-xethub.hf.co", hosts));
  EXPECT_FALSE(HostMatches("cdn-lfs.hf.co.evil.com", hosts));
  EXPECT_FALSE(HostMatches("127.0.0.3", {"*.0.0.3"}));
}

TEST(SourcePolicyTest, BadHubRulesAreRejected) {
  EXPECT_FALSE(LoadConfigString<SourcePolicy>("hubs:\n  - repositories: [a/b]\n"));
  EXPECT_FALSE(LoadConfigString<SourcePolicy>("hubs:\n  - endpoint: https://h/path\n"));
  EXPECT_FALSE(LoadConfigString<SourcePolicy>(
      "hubs:\n  - endpoint: https://h\n    redirectHosts: [\"cdn:443\"]\n"));
  EXPECT_FALSE(LoadConfigString<SourcePolicy>(
      "hubs:\n  - endpoint: https://h\n    redirectHosts: [\"https://cdn\"]\n"));
  EXPECT_TRUE(LoadConfigString<SourcePolicy>(
      "hubs:\n  - endpoint: https://h\n    redirectHosts: [\"*.cdn.example\"]\n"));
}

TEST(SourcePolicyTest, EveryBrokenSourceIsNamedAndNoPolicyRefusesAll) {
  const SourcePolicy policy = Policy();
  auto grants = AuthorizeSources(
      &policy, "team-a",
      {Shared("/etc"), Store("http://minio.example:9000", "models"), Http("http://10.0.0.1/")});
  ASSERT_FALSE(grants);
  EXPECT_THAT(grants.error().message(), HasSubstr("source \"nfs\""));
  EXPECT_THAT(grants.error().message(), HasSubstr("source \"hf\""));
  EXPECT_THAT(grants.error().message(), ::testing::Not(HasSubstr("source \"s3\"")));

  auto none = AuthorizeSources(nullptr, "team-a", {Shared("/mnt/models/x")});
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message(), HasSubstr("no source policy"));
  EXPECT_TRUE(AuthorizeSources(nullptr, "team-a", {}));
}

TEST(SourcePolicyTest, BadRulesAreRejectedWithTheirLine) {
  auto root = LoadConfigString<SourcePolicy>("sharedFilesystems:\n  - root: /\n");
  ASSERT_FALSE(root);
  EXPECT_THAT(root.error().message(), HasSubstr("whole node"));
  auto relative = LoadConfigString<SourcePolicy>("sharedFilesystems:\n  - root: data/../x\n");
  ASSERT_FALSE(relative);
  auto no_buckets = LoadConfigString<SourcePolicy>("objectStores:\n  - endpoint: http://a\n");
  ASSERT_FALSE(no_buckets);
  EXPECT_THAT(no_buckets.error().message(), HasSubstr("buckets"));
  auto typo = LoadConfigString<SourcePolicy>("httpOrigin:\n  - url: https://a\n");
  ASSERT_FALSE(typo);
  auto secret = LoadConfigString<SourcePolicy>("credentials:\n  - secret: ../x\n");
  ASSERT_FALSE(secret);
  EXPECT_THAT(secret.error().message(), HasSubstr("not a Secret name"));
  auto nowhere = LoadConfigString<SourcePolicy>("credentials:\n  - secret: x\n");
  ASSERT_FALSE(nowhere);
  EXPECT_THAT(nowhere.error().message(), HasSubstr("no secretNamespace"));
  auto bad_namespace =
      LoadConfigString<SourcePolicy>("credentials:\n  - secret: x\n    secretNamespace: A\n");
  ASSERT_FALSE(bad_namespace);
  EXPECT_THAT(bad_namespace.error().message(), HasSubstr("not a namespace name"));
}

TEST(SourcePolicyTest, MalformedAddressRangesAreRefusedNamingTheField) {
  auto good = LoadConfigString<SourcePolicy>(
      "objectStores:\n  - {endpoint: http://minio:9000, buckets: [m], addresses: "
      "[127.0.0.0/8, \"fd00::/8\", 10.1.2.3]}\n"
      "httpOrigins:\n  - {url: https://models.internal/, addresses: [\"::ffff:10.0.0.0/104\"]}\n");
  ASSERT_TRUE(good) << good.error().ToString();
  EXPECT_EQ(good->object_stores[0].addresses.size(), 3U);

  for (const auto& [rules, bad] :
       {std::pair<std::string, std::string>{"objectStores:\n  - {buckets: [m], addresses: ", ""},
        {"httpOrigins:\n  - {url: https://a/, addresses: ", ""}}) {
    for (const std::string_view range :
         {"10.0.0.0/33", "\"::/129\"", "10.1.2.3/8", "10.0.0.0/08", "localhost", "10.0.0.0/-1"}) {
      auto loaded = LoadConfigString<SourcePolicy>(fmt::format("{}[{}]}}\n", rules, range));
      ASSERT_FALSE(loaded) << rules << range;
      EXPECT_THAT(loaded.error().message(), HasSubstr("addresses[0]")) << range;
      EXPECT_THAT(loaded.error().message(), HasSubstr("is not an address range (CIDR)")) << range;
    }
    auto second = LoadConfigString<SourcePolicy>(rules + "[127.0.0.0/8, 10.0.0.0/40]}\n");
    ASSERT_FALSE(second);
    EXPECT_THAT(second.error().message(), HasSubstr("addresses[1]"));
    EXPECT_THAT(second.error().message(), HasSubstr("at most /32"));
  }
}

TEST(SourcePolicyTest, GrantsCarryTheRulesAddressesAndItsOwnIpLiteral) {
  auto policy = LoadConfigString<SourcePolicy>(
      "objectStores:\n"
      "  - {endpoint: http://minio:9000, buckets: [m], addresses: [10.1.0.0/16], "
      "nodeCredentials: true}\n"
      "  - {endpoint: \"http://127.0.0.1:9000\", buckets: [m], nodeCredentials: true}\n"
      "  - {endpoint: \"http://[fd00::5]:9000\", buckets: [m], nodeCredentials: true}\n"
      "  - {buckets: [aws], nodeCredentials: true}\n"
      "httpOrigins:\n"
      "  - {url: http://localhost:8080/}\n"
      "  - {url: http://localhost:8081/, addresses: [127.0.0.0/8]}\n");
  ASSERT_TRUE(policy) << policy.error().ToString();
  auto grants =
      AuthorizeSources(&*policy, "x",
                       {Store("http://minio:9000", "m"), Store("http://127.0.0.1:9000", "m"),
                        Store("http://[FD00::5]:9000", "m"), Store("", "aws"),
                        Http("http://localhost:8080/m"), Http("http://localhost:8081/m")});
  ASSERT_TRUE(grants) << grants.error().ToString();
  std::vector<std::string> allowed;
  for (const SourceGrant& grant : *grants) {
    ASSERT_TRUE(grant.addresses) << "every object store and origin is bound to addresses";
    allowed.push_back(grant.addresses->ToString());
  }
  EXPECT_EQ(allowed, (std::vector<std::string>{"public+10.1.0.0/16", "public+127.0.0.1/32",
                                               "public+fd00::5/128", "public+", "public+",
                                               "public+127.0.0.0/8"}));
  const auto ip = [](const char* text) { return boost::asio::ip::make_address(text); };
  EXPECT_FALSE((*grants)[4].addresses->Allows(ip("127.0.0.1")));  // localhost, not named
  EXPECT_TRUE((*grants)[5].addresses->Allows(ip("127.0.0.1")));
  EXPECT_FALSE((*grants)[1].addresses->Allows(ip("127.0.0.2")));  // the literal, no more
  EXPECT_FALSE((*grants)[0].addresses->Allows(ip("169.254.169.254")));
  // Shared filesystems reach no address.
  auto shared = AuthorizeSources(&*policy, "x", {});
  ASSERT_TRUE(shared);
}

}  // namespace
}  // namespace modelplane::core
