#include "node-agent/csi/volume_leases.h"

#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "node-agent/store/revision_view.h"

namespace modelplane::agent {
namespace {

VolumeLease Lease(const std::string& volume, const std::string& target, std::string_view revision) {
  return {.volume_id = volume,
          .target_path = target,
          .revision_digest = core::Sha256Of(revision),
          .revision = "serving/" + std::string(revision),
          .pod_namespace = "serving",
          .pod_name = "server-0",
          .pod_uid = "u1",
          .published_unix_seconds = 1'700'000'000};
}

class VolumeLeasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              ("volume-leases-test-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    RemoveTree(folder_);
  }
  void TearDown() override { RemoveTree(folder_); }

  std::unique_ptr<VolumeLeases> Open() {
    auto leases = VolumeLeases::Open(folder_);
    EXPECT_TRUE(leases) << leases.error().ToString();
    return leases ? std::move(*leases) : nullptr;
  }

  std::filesystem::path folder_;
};

TEST(VolumeLeaseTest, RoundTripsAndRefusesWhatThePluginWouldNotWrite) {
  const VolumeLease lease = Lease("csi-1", "/var/lib/kubelet/pods/u1/v/mount", "r1");
  auto parsed = ParseLease(SerializeLease(lease));
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(*parsed, lease);
  for (const char* bad :
       {"", "[]", "{not json", R"({"targetPath":"relative","revisionDigest":"sha256:00"})",
        R"({"targetPath":"/a","revisionDigest":"sha256:zz"})",
        R"({"targetPath":"/a","revisionDigest":7})"}) {
    auto refused = ParseLease(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.error().code(), core::ErrorCode::kDataLoss);
  }
  EXPECT_FALSE(ParseLease(std::string(70'000, ' ')));
  const std::string digest = core::FormatDigest(core::Sha256Of("r1"));
  EXPECT_TRUE(ParseLease(R"({"targetPath":"/a","revisionDigest":")" + digest + R"("})"));
  // Two targetPath keys: which one would unmount? Neither; the record is refused.
  EXPECT_FALSE(
      ParseLease(R"({"targetPath":"/a","targetPath":"/b","revisionDigest":")" + digest + R"("})"));
  EXPECT_FALSE(ParseLease(R"({"targetPath":"/a","revisionDigest":")" + digest + R"(","pod":"x"})"));
}

TEST_F(VolumeLeasesTest, RecordsSurviveAReopenAndDropRemovesThem) {
  {
    auto leases = Open();
    ASSERT_TRUE(leases->Put(Lease("csi-1", "/pods/u1/a/mount", "r1")));
    ASSERT_TRUE(leases->Put(Lease("csi-2", "/pods/u2/a/mount", "r1")));
    ASSERT_TRUE(leases->Put(Lease("csi-3", "/pods/u3/a/mount", "r2")));
    EXPECT_EQ(leases->InUseDigests(),
              (std::set<core::Sha256Bytes>{core::Sha256Of("r1"), core::Sha256Of("r2")}));
    EXPECT_TRUE(std::filesystem::exists(leases->RecordPath("/pods/u1/a/mount")));
  }
  auto leases = Open();
  EXPECT_EQ(leases->report().loaded, 3u);
  ASSERT_EQ(leases->List().size(), 3u);
  EXPECT_EQ(*leases->AtTarget("/pods/u2/a/mount"), Lease("csi-2", "/pods/u2/a/mount", "r1"));
  ASSERT_EQ(leases->OfVolume("csi-3").size(), 1u);
  ASSERT_TRUE(leases->Drop("/pods/u3/a/mount"));
  ASSERT_TRUE(leases->Drop("/pods/never/leased"));  // nothing there: fine
  EXPECT_EQ(leases->InUseDigests(), std::set<core::Sha256Bytes>{core::Sha256Of("r1")});
  EXPECT_FALSE(std::filesystem::exists(leases->RecordPath("/pods/u3/a/mount")));
  leases.reset();
  EXPECT_EQ(Open()->List().size(), 2u);
}

TEST_F(VolumeLeasesTest, UnreadableOrMisfiledRecordsAreRemovedOnOpen) {
  {
    auto leases = Open();
    ASSERT_TRUE(leases->Put(Lease("csi-1", "/pods/u1/a/mount", "r1")));
  }
  std::ofstream(folder_ / (std::string(64, 'a') + ".json")) << "{broken";
  std::ofstream(folder_ / ".x.json.0123.tmp") << "half";
  // A valid record under a name that is not its target's: it cannot be found by target later.
  std::ofstream(folder_ / (std::string(64, 'b') + ".json"))
      << SerializeLease(Lease("csi-9", "/pods/u9/a/mount", "r9"));
  auto leases = Open();
  EXPECT_EQ(leases->report().loaded, 1u);
  EXPECT_EQ(leases->report().removed_unreadable, 3u);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder_), {}), 1);
}

}  // namespace
}  // namespace modelplane::agent
