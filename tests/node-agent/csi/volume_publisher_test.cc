// The publisher's rules against a recording mounter and a table resolver: refusals and their
// codes, idempotency, the lease written before the mount and dropped after the unmount, and
// recovery against the mount table. The real mount(2) path is csi_plugin_root_test.cc.
#include "node-agent/csi/volume_publisher.h"

#include <sstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "node-agent/store/revision_view.h"
#include "tests/node-agent/csi/csi_test_support.h"

namespace modelplane::agent {
namespace {

using testing::RecordingMounter;
using testing::TableResolver;

class VolumePublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() /
            ("volume-publisher-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    RemoveTree(base_);
    std::filesystem::create_directories(base_ / "pods");
    layout_ = StoreLayout(base_ / "cache");
    auto logger = core::Logger::Create({.component = "test", .sink = core::LogSink::Stream(log_)});
    ASSERT_TRUE(logger);
    logger_ = std::make_unique<core::Logger>(*logger);
    resolver_.Set("serving", "llama-r1",
                  {.known = true, .digest = core::Sha256Of("r1"), .ready_here = true});
    resolver_.Set("serving", "llama-r2",
                  {.known = true, .digest = core::Sha256Of("r2"), .ready_here = true});
    resolver_.Set("serving", "staging",
                  {.known = true, .digest = core::Sha256Of("s"), .ready_here = false});
    resolver_.Set(
        "serving", "revoked",
        {.known = true, .digest = core::Sha256Of("x"), .revoked = true, .ready_here = true});
    resolver_.Set("serving", "broken", {.problem = "invalid: spec.files is empty"});
  }
  void TearDown() override { RemoveTree(base_); }

  std::unique_ptr<VolumePublisher> Create() {
    auto publisher = VolumePublisher::Create({.layout = layout_,
                                              .resolver = resolver_,
                                              .mounter = mounter_,
                                              .logger = *logger_,
                                              .clock = clock_},
                                             base_ / "pods");
    EXPECT_TRUE(publisher) << publisher.error().ToString();
    return publisher ? std::move(*publisher) : nullptr;
  }

  std::string Target(const std::string& pod) const {
    return (base_ / "pods" / pod / "volumes/kubernetes.io~csi/weights/mount").string();
  }
  PublishRequest Request(const std::string& volume, const std::string& pod,
                         const std::string& revision = "llama-r1") const {
    return {.volume_id = volume,
            .target_path = Target(pod),
            .revision_name = revision,
            .pod_namespace = "serving",
            .pod_name = pod,
            .pod_uid = pod + "-uid"};
  }
  static void ExpectCode(const core::Status& status, core::ErrorCode code, std::string_view words) {
    ASSERT_FALSE(status) << words;
    EXPECT_EQ(status.error().code(), code) << status.error().ToString();
    EXPECT_NE(status.error().message().find(words), std::string::npos) << status.error().message();
  }

  std::filesystem::path base_;
  StoreLayout layout_{std::filesystem::temp_directory_path() / "unused"};
  std::ostringstream log_;
  std::unique_ptr<core::Logger> logger_;
  TableResolver resolver_;
  RecordingMounter mounter_;
  core::ManualClock clock_;
};

TEST_F(VolumePublisherTest, PublishWritesTheLeaseAndBindsTheViewReadOnly) {
  auto publisher = Create();
  ASSERT_TRUE(publisher->Publish(Request("csi-1", "p1")));
  const auto mounts = mounter_.mounts();
  ASSERT_EQ(mounts.size(), 1u);
  EXPECT_EQ(mounts[0].root, layout_.RevisionView(core::Sha256Of("r1")).string());
  EXPECT_EQ(mounts[0].mount_point, Target("p1"));
  EXPECT_TRUE(std::filesystem::is_directory(Target("p1")));  // created by the plugin
  ASSERT_EQ(publisher->Leases().size(), 1u);
  const VolumeLease lease = publisher->Leases()[0];
  EXPECT_EQ(lease.volume_id, "csi-1");
  EXPECT_EQ(lease.revision, "serving/llama-r1");
  EXPECT_EQ(lease.pod_name, "p1");
  EXPECT_EQ(lease.pod_uid, "p1-uid");
  EXPECT_EQ(publisher->InUseDigests(), std::set<core::Sha256Bytes>{core::Sha256Of("r1")});
  // On disk, for the next start.
  auto reopened = VolumeLeases::Open(layout_.CsiVolumeDirectory());
  ASSERT_TRUE(reopened);
  EXPECT_EQ((*reopened)->List(), publisher->Leases());
  EXPECT_NE(log_.str().find("csi_volume_published"), std::string::npos) << log_.str();
}

TEST_F(VolumePublisherTest, RevisionsThatCannotBeMountedAreFailedPreconditions) {
  auto publisher = Create();
  ExpectCode(publisher->Publish(Request("csi-1", "p1", "absent")), core::ErrorCode::kConflict,
             "ModelRevision serving/absent cannot be mounted: not found");
  ExpectCode(publisher->Publish(Request("csi-1", "p1", "broken")), core::ErrorCode::kConflict,
             "invalid: spec.files is empty");
  ExpectCode(publisher->Publish(Request("csi-1", "p1", "revoked")), core::ErrorCode::kConflict,
             "is revoked");
  ExpectCode(publisher->Publish(Request("csi-1", "p1", "staging")), core::ErrorCode::kConflict,
             "is not Ready in this node's cache");
  EXPECT_EQ(mounter_.binds(), 0);
  EXPECT_TRUE(publisher->Leases().empty());
  EXPECT_FALSE(std::filesystem::exists(Target("p1")));
  resolver_.SetSynced(false);
  ExpectCode(publisher->Publish(Request("csi-1", "p1")), core::ErrorCode::kUnavailable,
             "not synced");
}

TEST_F(VolumePublisherTest, TargetsOutsideTheRootAreRefused) {
  auto publisher = Create();
  auto request = Request("csi-1", "p1");
  request.target_path = "/etc";
  ExpectCode(publisher->Publish(request), core::ErrorCode::kInvalidArgument, "not below");
  request.target_path = (base_ / "pods/../../etc").string();
  ExpectCode(publisher->Publish(request), core::ErrorCode::kInvalidArgument, "normalized");
  ExpectCode(publisher->Unpublish({.volume_id = "csi-1", .target_path = "/etc"}),
             core::ErrorCode::kInvalidArgument, "not below");
  // A symlink inside the root that leads out of it.
  std::filesystem::create_directories(base_ / "outside");
  std::filesystem::create_symlink(base_ / "outside", base_ / "pods" / "link");
  request.target_path = (base_ / "pods/link/mount").string();
  ExpectCode(publisher->Publish(request), core::ErrorCode::kInvalidArgument, "symlink");
  EXPECT_EQ(mounter_.binds(), 0);
}

TEST_F(VolumePublisherTest, PublishAndUnpublishAreIdempotent) {
  auto publisher = Create();
  ASSERT_TRUE(publisher->Publish(Request("csi-1", "p1")));
  ASSERT_TRUE(publisher->Publish(Request("csi-1", "p1")));
  EXPECT_EQ(mounter_.binds(), 1);
  EXPECT_EQ(mounter_.mounts().size(), 1u);
  ASSERT_TRUE(publisher->Unpublish({.volume_id = "csi-1", .target_path = Target("p1")}));
  EXPECT_TRUE(mounter_.mounts().empty());
  EXPECT_FALSE(std::filesystem::exists(Target("p1")));
  EXPECT_TRUE(publisher->Leases().empty());
  EXPECT_TRUE(publisher->InUseDigests().empty());
  ASSERT_TRUE(publisher->Unpublish({.volume_id = "csi-1", .target_path = Target("p1")}));
  // A target that was never published.
  ASSERT_TRUE(publisher->Unpublish({.volume_id = "csi-7", .target_path = Target("never")}));
}

TEST_F(VolumePublisherTest, ARecordWithoutItsMountIsMountedAgain) {
  auto publisher = Create();
  ASSERT_TRUE(publisher->Publish(Request("csi-1", "p1")));
  ASSERT_TRUE(mounter_.Unmount(Target("p1")));  // behind the plugin's back
  ASSERT_TRUE(publisher->Publish(Request("csi-1", "p1")));
  EXPECT_EQ(mounter_.binds(), 2);
  EXPECT_EQ(mounter_.mounts().size(), 1u);
}

TEST_F(VolumePublisherTest, OneVolumeAtTwoTargetsMustBeOneRevision) {
  auto publisher = Create();
  ASSERT_TRUE(publisher->Publish(Request("csi-1", "p1")));
  // The same volume and revision at a second target: read-only mounts, sharing is harmless.
  auto second = Request("csi-1", "p1");
  second.target_path = Target("p1-again");
  ASSERT_TRUE(publisher->Publish(second));
  EXPECT_EQ(publisher->Leases().size(), 2u);
  // The same volume with another revision elsewhere: the id would mean two things.
  auto other = Request("csi-1", "p1", "llama-r2");
  other.target_path = Target("p1-other");
  ExpectCode(publisher->Publish(other), core::ErrorCode::kConflict, "already published at");
  // Another volume at a target already in use.
  ExpectCode(publisher->Publish(Request("csi-2", "p1")), core::ErrorCode::kAlreadyExists,
             "already holds volume");
  ExpectCode(publisher->Unpublish({.volume_id = "csi-2", .target_path = Target("p1")}),
             core::ErrorCode::kNotFound, "holds volume");
  EXPECT_EQ(mounter_.mounts().size(), 2u);
}

TEST_F(VolumePublisherTest, AMountThePluginDidNotMakeIsNotCoveredOrAdopted) {
  auto publisher = Create();
  std::filesystem::create_directories(Target("p1"));
  mounter_.AddMount("/some/other/filesystem", Target("p1"));
  ExpectCode(publisher->Publish(Request("csi-1", "p1")), core::ErrorCode::kAlreadyExists,
             "did not publish");
  EXPECT_EQ(mounter_.binds(), 0);
}

TEST_F(VolumePublisherTest, AFailedMountLeavesNoLeaseAndNoFolder) {
  auto publisher = Create();
  mounter_.FailNextBind();
  ExpectCode(publisher->Publish(Request("csi-1", "p1")), core::ErrorCode::kPermissionDenied,
             "not permitted");
  EXPECT_TRUE(publisher->Leases().empty());
  EXPECT_FALSE(std::filesystem::exists(Target("p1")));
  EXPECT_TRUE(std::filesystem::is_empty(layout_.CsiVolumeDirectory()));
}

// A restart: records whose target is not mounted go, mounts of views without a record are
// adopted, and the rest is kept as it was.
TEST_F(VolumePublisherTest, RestartRebuildsLeasesFromRecordsAndTheMountTable) {
  {
    auto publisher = Create();
    ASSERT_TRUE(publisher->Publish(Request("csi-1", "p1")));
    ASSERT_TRUE(publisher->Publish(Request("csi-2", "p2", "llama-r2")));
  }
  ASSERT_TRUE(mounter_.Unmount(Target("p2")));  // the agent died after unmounting p2
  std::filesystem::create_directories(Target("p3"));
  // Mounted by an earlier agent whose records were lost: the root names a view.
  mounter_.AddMount("/var/lib/modelplane/cache/models/" + core::ToHex(core::Sha256Of("r3")),
                    Target("p3"));
  mounter_.AddMount("/var/lib/modelplane/cache/models/" + core::ToHex(core::Sha256Of("r4")),
                    "/mnt/not-under-the-root");
  auto publisher = Create();
  EXPECT_EQ(publisher->recovery().kept, 1u);
  EXPECT_EQ(publisher->recovery().dropped_not_mounted, 1u);
  EXPECT_EQ(publisher->recovery().adopted, 1u);
  EXPECT_EQ(publisher->InUseDigests(),
            (std::set<core::Sha256Bytes>{core::Sha256Of("r1"), core::Sha256Of("r3")}));
  // The adopted lease learns its volume when kubelet publishes it again, and unpublishes.
  resolver_.Set("serving", "llama-r3",
                {.known = true, .digest = core::Sha256Of("r3"), .ready_here = true});
  ASSERT_TRUE(publisher->Publish(Request("csi-3", "p3", "llama-r3")));
  EXPECT_EQ(publisher->Leases().size(), 2u);
  ASSERT_TRUE(publisher->Unpublish({.volume_id = "csi-3", .target_path = Target("p3")}));
  EXPECT_EQ(publisher->InUseDigests(), std::set<core::Sha256Bytes>{core::Sha256Of("r1")});
  EXPECT_NE(log_.str().find("csi_lease_dropped"), std::string::npos);
  EXPECT_NE(log_.str().find("csi_lease_adopted"), std::string::npos);
}

}  // namespace
}  // namespace modelplane::agent

namespace modelplane::agent {
namespace {

// Eviction claims a view only while nothing mounts it, and no mount of a claimed revision
// starts; once the claim goes, publishing works again.
TEST_F(VolumePublisherTest, EvictionClaimsOnlyUnmountedViewsAndBlocksNewMounts) {
  auto publisher = Create();
  ASSERT_TRUE(publisher->Publish(Request("csi-1", "p1")));
  EXPECT_FALSE(publisher->ClaimUnmounted(core::Sha256Of("r1")));  // p1 has it mounted
  std::optional<ViewClaim> claim = publisher->ClaimUnmounted(core::Sha256Of("r2"));
  ASSERT_TRUE(claim);
  ExpectCode(publisher->Publish(Request("csi-2", "p2", "llama-r2")), core::ErrorCode::kUnavailable,
             "being evicted");
  EXPECT_TRUE(mounter_.mounts().size() == 1u);
  claim.reset();
  EXPECT_TRUE(publisher->Publish(Request("csi-2", "p2", "llama-r2")));
  ASSERT_TRUE(publisher->Unpublish({.volume_id = "csi-1", .target_path = Target("p1")}));
  EXPECT_TRUE(publisher->ClaimUnmounted(core::Sha256Of("r1")));
}

}  // namespace
}  // namespace modelplane::agent
