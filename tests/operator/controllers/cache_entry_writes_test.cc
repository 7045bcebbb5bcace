// UpdateCacheEntries against the real API server: the operator's writers of one ModelCache take
// turns and start from the newest copy the operator knows, so many revisions landing on one
// cache while the informer lags cost one write each and no conflict; a write by another client
// (the node agent's status) still meets the resourceVersion precondition, and the retry keeps
// every entry.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/api/model_revision.h"
#include "core/kube/latest_objects.h"
#include "core/kube/object_store.h"
#include "operator/controllers/cache_entries.h"
#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/core/kube/forwarding_kube_client.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

// The real client, counting what the writers send and what the server answered.
class CountingClient final : public core::testing::ForwardingKubeClient {
 public:
  using ForwardingKubeClient::ForwardingKubeClient;

  std::atomic<int> gets{0};
  std::atomic<int> patches{0};
  std::atomic<int> conflicts{0};

  core::Result<json> Get(const core::ResourceType& type, const std::string& ns,
                         const std::string& name) override {
    ++gets;
    return ForwardingKubeClient::Get(type, ns, name);
  }
  core::Result<json> Patch(const core::ResourceType& type, const std::string& ns,
                           const std::string& name, core::PatchType patch_type, const json& patch,
                           const core::PatchOptions& options) override {
    ++patches;
    auto answer = ForwardingKubeClient::Patch(type, ns, name, patch_type, patch, options);
    if (!answer && answer.error().code() == core::ErrorCode::kConflict) ++conflicts;
    return answer;
  }
};

class CacheEntryWritesTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!ModelplaneCrdsInstalled()) GTEST_SKIP() << core::testing::kModelplaneCrdsMissing;
    cache_name_ = namespace_;  // ModelCaches are cluster-scoped: the test's namespace is unique
    auto created = client_->Create(core::resources::ModelCaches(), "",
                                   {{"apiVersion", api::kApiVersion},
                                    {"kind", api::kModelCacheKind},
                                    {"metadata", {{"name", cache_name_}}},
                                    {"spec", json::object()}});
    ASSERT_TRUE(created) << created.error().ToString();
    // The informer's copy, never refreshed: as lagging as an informer can be.
    informer_.Upsert(std::make_shared<const json>(std::move(*created)));
  }

  void TearDown() override {
    if (client_ && !cache_name_.empty()) {
      (void)client_->Delete(core::resources::ModelCaches(), "", cache_name_);
    }
    ClusterTest::TearDown();
  }

  core::Result<bool> Add(core::KubeClient& client, const std::string& revision) {
    const api::DesiredRevision entry{.revision = {.namespace_name = namespace_, .name = revision},
                                     .digest = "sha256:" + std::string(64, 'a'),
                                     .reason = "prestage"};
    return UpdateCacheEntries(client, latest_, informer_, cache_name_,
                              [&](const std::vector<api::DesiredRevision>& entries) {
                                return ReplaceEntry(entries, entry.revision, &entry);
                              });
  }

  std::vector<std::string> StoredRevisions() {
    std::vector<std::string> names;
    auto cache = client_->Get(core::resources::ModelCaches(), "", cache_name_);
    EXPECT_TRUE(cache) << cache.error().ToString();
    if (!cache) return names;
    auto parsed = api::ModelCacheFromJson(*cache);
    EXPECT_TRUE(parsed) << parsed.error().ToString();
    if (!parsed) return names;
    for (const api::DesiredRevision& entry : parsed->spec.revisions) {
      names.push_back(entry.revision.name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string cache_name_;
  core::ObjectStore informer_;
  core::LatestObjects latest_;
};

TEST_F(CacheEntryWritesTest, ManyWritersOfOneCacheCostOneWriteEachAndNoConflict) {
  CountingClient counting(*client_);
  constexpr int kWriters = 6;
  constexpr int kEach = 5;
  std::vector<std::thread> writers;
  writers.reserve(kWriters);
  std::atomic<int> failures{0};
  for (int writer = 0; writer < kWriters; ++writer) {
    writers.emplace_back([&, writer] {
      for (int i = 0; i < kEach; ++i) {
        auto written = Add(counting, "rev-" + std::to_string(writer) + "-" + std::to_string(i));
        if (!written || !*written) ++failures;
      }
    });
  }
  for (std::thread& thread : writers) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(counting.patches.load(), kWriters * kEach);
  EXPECT_EQ(counting.conflicts.load(), 0);
  EXPECT_EQ(counting.gets.load(), 0);
  EXPECT_EQ(StoredRevisions().size(), static_cast<std::size_t>(kWriters * kEach));
  // Writing what is there already sends nothing.
  auto again = Add(counting, "rev-0-0");
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_FALSE(*again);
  EXPECT_EQ(counting.patches.load(), kWriters * kEach);
}

TEST_F(CacheEntryWritesTest, AnotherClientsWriteStillConflictsAndTheRetryKeepsEveryEntry) {
  CountingClient counting(*client_);
  ASSERT_TRUE(Add(counting, "first").value_or(false));
  // The node agent writes the status in between: the kept answer is now stale.
  auto status =
      client_->Patch(core::resources::ModelCaches(), "", cache_name_, core::PatchType::kMerge,
                     {{"status", {{"capacityBytes", 1024}}}}, {.subresource = "status"});
  ASSERT_TRUE(status) << status.error().ToString();
  ASSERT_TRUE(Add(counting, "second").value_or(false));
  EXPECT_EQ(counting.conflicts.load(), 1);
  EXPECT_EQ(counting.gets.load(), 1);
  EXPECT_EQ(StoredRevisions(), (std::vector<std::string>{"first", "second"}));
  // The retry's read is kept too: the next write needs no second conflict.
  ASSERT_TRUE(Add(counting, "third").value_or(false));
  EXPECT_EQ(counting.conflicts.load(), 1);
}

}  // namespace
}  // namespace modelplane::controller
