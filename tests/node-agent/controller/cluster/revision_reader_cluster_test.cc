// RevisionReader against the real API server: it reads each revision the loop needs once, again
// only when it is due (the refresh period, the retry period after a miss or for a digest other
// than the operator's), and forgets what is no longer needed. A ForwardingKubeClient counts the
// reads; time is a ManualClock.
#include <gtest/gtest.h>

#include "core/api/object_key.h"
#include "core/kube/resource_type.h"
#include "node-agent/controller/revision_reader.h"
#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/core/kube/forwarding_kube_client.h"

namespace modelplane::agent {
namespace {

using nlohmann::json;
using std::chrono::seconds;

class CountingClient final : public core::testing::ForwardingKubeClient {
 public:
  using ForwardingKubeClient::ForwardingKubeClient;
  core::Result<json> Get(const core::ResourceType& type, const std::string& namespace_name,
                         const std::string& name) override {
    ++gets;
    return ForwardingKubeClient::Get(type, namespace_name, name);
  }
  int gets = 0;
};

class RevisionReaderClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!ModelplaneCrdsInstalled()) GTEST_SKIP() << core::testing::kModelplaneCrdsMissing;
    const json revision = {
        {"apiVersion", "modelplane.io/v1alpha1"},
        {"kind", "ModelRevision"},
        {"metadata", {{"name", "reader-r1"}, {"namespace", namespace_}}},
        {"spec",
         {{"modelName", "test/reader"},
          {"repositoryRevision", "r1"},
          {"format", "safetensors"},
          {"engine", {{"name", "vllm"}, {"version", "0.11.0"}}},
          {"sources",
           {{{"name", "s3"},
             {"type", "objectStore"},
             {"objectStore", {{"endpoint", "http://127.0.0.1:1"}, {"bucket", "models"}}}}}},
          {"files",
           {{{"path", "model.safetensors"},
             {"size", 4096},
             {"sha256", "sha256:" + std::string(64, 'a')},
             {"role", "weights"}}}}}}};
    auto created = client_->Create(core::resources::ModelRevisions(), namespace_, revision);
    ASSERT_TRUE(created) << created.error().ToString();
  }

  std::string Key(const std::string& name) const { return core::api::ObjectKey(namespace_, name); }

  core::ManualClock clock_manual_;
};

TEST_F(RevisionReaderClusterTest, ReadsOnceThenOnlyWhenDueAndForgetsWhatIsNotNeeded) {
  CountingClient client(*client_);
  RevisionReader reader(client, clock_manual_,
                        {.refresh_period = seconds(300), .retry_period = seconds(10)});
  const std::string digest = "sha256:" + std::string(64, 'd');
  // The digest the index computed for the key: the operator's, until it says another.
  std::optional<core::Sha256Bytes> held = core::ParseDigest(digest).value();
  const auto digest_of = [&](const std::string&) { return held; };

  ASSERT_TRUE(reader.Sync({{Key("reader-r1"), digest}}, digest_of));
  EXPECT_EQ(client.gets, 1);
  ASSERT_EQ(reader.Objects().size(), 1u);
  EXPECT_EQ(core::ObjectStore::KeyOf(*reader.Objects()[0]), Key("reader-r1"));
  EXPECT_FALSE(reader.NextRetry());

  // Every pass asks; nothing is read again until it is due.
  for (int pass = 0; pass < 5; ++pass)
    ASSERT_TRUE(reader.Sync({{Key("reader-r1"), digest}}, digest_of));
  clock_manual_.Advance(seconds(60));
  ASSERT_TRUE(reader.Sync({{Key("reader-r1"), digest}}, digest_of));
  EXPECT_EQ(client.gets, 1);

  // The operator names another digest (the revision was replaced): read again.
  const std::string other = "sha256:" + std::string(64, 'e');
  ASSERT_TRUE(reader.Sync({{Key("reader-r1"), other}}, digest_of));
  EXPECT_EQ(client.gets, 2);
  // ... but not on every pass while it still differs: once a retry period.
  ASSERT_TRUE(reader.Sync({{Key("reader-r1"), other}}, digest_of));
  EXPECT_EQ(client.gets, 2);
  held = core::ParseDigest(other).value();

  // The refresh period.
  clock_manual_.Advance(seconds(300));
  ASSERT_TRUE(reader.Sync({{Key("reader-r1"), ""}}, digest_of));
  EXPECT_EQ(client.gets, 3);

  // A revision that does not exist (yet): not among the objects, read again after the retry
  // period, and the loop is told when.
  ASSERT_TRUE(reader.Sync({{Key("reader-r1"), ""}, {Key("missing"), ""}}, digest_of));
  EXPECT_EQ(client.gets, 4);
  EXPECT_EQ(reader.Objects().size(), 1u);
  ASSERT_TRUE(reader.NextRetry());
  EXPECT_EQ(*reader.NextRetry(), clock_manual_.Now() + seconds(10));
  clock_manual_.Advance(seconds(10));
  ASSERT_TRUE(reader.Sync({{Key("reader-r1"), ""}, {Key("missing"), ""}}, digest_of));
  EXPECT_EQ(client.gets, 5);

  // No longer needed: forgotten, and read afresh if needed again.
  ASSERT_TRUE(reader.Sync({}, digest_of));
  EXPECT_TRUE(reader.Objects().empty());
  ASSERT_TRUE(reader.Sync({{Key("reader-r1"), ""}}, digest_of));
  EXPECT_EQ(client.gets, 6);
  EXPECT_EQ(reader.reads(), 6u);
}

}  // namespace
}  // namespace modelplane::agent
