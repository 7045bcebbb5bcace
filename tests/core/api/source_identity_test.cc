#include "core/api/source_identity.h"

#include <gtest/gtest.h>

#include "core/api/source_budget.h"

namespace modelplane::core::api {
namespace {

ModelSource ObjectStore(std::string endpoint, std::string bucket, std::string prefix = "") {
  return {.name = "any",
          .type = std::string(kSourceObjectStore),
          .object_store = ObjectStoreLocation{.endpoint = std::move(endpoint),
                                              .bucket = std::move(bucket),
                                              .prefix = std::move(prefix),
                                              .region = "eu-west-1"}};
}

TEST(SourceIdentityTest, TheBucketNotTheSourceNameIsTheIdentity) {
  ModelSource a = ObjectStore("http://MinIO.local:9000/", "models", "llama/r1");
  ModelSource b = ObjectStore("http://minio.local:9000", "models", "llama/r2");
  b.name = "other-name";
  EXPECT_EQ(SourceIdentity(a), "objectStore/http://minio.local:9000/models");
  EXPECT_EQ(SourceIdentity(a), SourceIdentity(b));
  EXPECT_NE(SourceIdentity(a), SourceIdentity(ObjectStore("http://minio.local:9000", "other")));
  EXPECT_EQ(SourceIdentity(ObjectStore("", "models")), "objectStore/aws:eu-west-1/models");
}

TEST(SourceIdentityTest, HttpOriginsByOriginAndFilesystemsByRoot) {
  const ModelSource http{.name = "hf",
                         .type = std::string(kSourceHttp),
                         .http = HttpLocation{.base_url = "https://HF.example:8443/org/model/"}};
  EXPECT_EQ(SourceIdentity(http), "http/https://hf.example:8443");
  const ModelSource shared{.name = "nfs",
                           .type = std::string(kSourceSharedFilesystem),
                           .shared_filesystem = SharedFilesystemLocation{.path = "/mnt/models/"}};
  EXPECT_EQ(SourceIdentity(shared), "sharedFilesystem//mnt/models");
  EXPECT_EQ(SourceIdentityTier(SourceIdentity(shared)), kTierSharedFilesystem);
  EXPECT_EQ(SourceIdentityTier("nonsense"), "");
}

TEST(SourceIdentityTest, BudgetNamesAreValidObjectNamesAndStable) {
  const std::string name = SourceBudgetName("objectStore/http://minio.local:9000/models");
  EXPECT_EQ(name.rfind("objectstore-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("objectstore-").size() + 16);
  EXPECT_EQ(name, SourceBudgetName("objectStore/http://minio.local:9000/models"));
  EXPECT_NE(name, SourceBudgetName("objectStore/http://minio.local:9000/other"));
}

TEST(SourceIdentityTest, SourceBudgetRoundTrips) {
  SourceBudgetObject budget;
  budget.metadata.name = "objectstore-0123456789abcdef";
  budget.spec = {.source = "objectStore/http://minio.local:9000/models", .max_streams = 32};
  budget.status = SourceBudgetStatus{.streams = 12,
                                     .phase = "Holding",
                                     .reason = "holding at 12 streams",
                                     .knee_streams = 12,
                                     .best_bytes_per_second = 1'000'000'000,
                                     .best_streams = 12,
                                     .observed_bytes_per_second = 990'000'000,
                                     .granted_streams = 12};
  auto parsed = SourceBudgetFromJson(ToJson(budget));
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->spec, budget.spec);
  EXPECT_EQ(parsed->status, budget.status);
  nlohmann::json missing_source = ToJson(budget);
  missing_source["spec"].erase("source");
  EXPECT_FALSE(SourceBudgetFromJson(missing_source));
}

}  // namespace
}  // namespace modelplane::core::api
