#include "node-agent/csi/mount_info.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

// Lines as the kernel writes them (proc(5)): optional fields, none, and escaped paths.
constexpr char kTable[] =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
    "35 22 0:31 / /sys rw,nosuid,nodev,noexec,relatime shared:7 master:2 - sysfs sysfs rw\n"
    "410 22 8:1 /var/lib/modelplane/cache/models/abc /var/lib/kubelet/pods/u1/volumes/"
    "kubernetes.io~csi/w/mount ro,nosuid,nodev,relatime - ext4 /dev/sda1 rw\n"
    "411 22 0:52 / /mnt/with\\040space\\011tab\\134back rw - tmpfs tmp\\040fs rw,size=10k\n";

TEST(MountInfoTest, ParsesFieldsOptionalFieldsAndEscapes) {
  auto mounts = ParseMountInfo(kTable);
  ASSERT_TRUE(mounts) << mounts.error().ToString();
  ASSERT_EQ(mounts->size(), 4u);
  const MountEntry& root = (*mounts)[0];
  EXPECT_EQ(root.mount_id, 22);
  EXPECT_EQ(root.parent_id, 1);
  EXPECT_EQ(root.device, "8:1");
  EXPECT_EQ(root.mount_point, "/");
  EXPECT_EQ(root.filesystem_type, "ext4");
  EXPECT_EQ(root.source, "/dev/sda1");
  EXPECT_EQ(root.super_options, "rw,errors=remount-ro");
  EXPECT_EQ((*mounts)[1].filesystem_type, "sysfs");  // two optional fields skipped
  const MountEntry& view = (*mounts)[2];
  EXPECT_EQ(view.root, "/var/lib/modelplane/cache/models/abc");
  EXPECT_TRUE(view.HasOption("ro"));
  EXPECT_TRUE(view.HasOption("nodev"));
  EXPECT_FALSE(view.HasOption("rw"));
  EXPECT_FALSE(view.HasOption("no"));  // whole options only
  EXPECT_EQ((*mounts)[3].mount_point, "/mnt/with space\ttab\\back");
  EXPECT_EQ((*mounts)[3].source, "tmp fs");
}

TEST(MountInfoTest, MalformedLinesAreRefusedWithTheirNumber) {
  for (const char* bad : {"22 1 8:1 / / rw\n",                            // no separator
                          "22 1 8:1 / / rw shared:1 - ext4 /dev/sda1\n",  // too few after -
                          "x 1 8:1 / / rw - ext4 /dev/sda1 rw\n"}) {      // id not a number
    auto mounts = ParseMountInfo(std::string(kTable) + bad);
    ASSERT_FALSE(mounts) << bad;
    EXPECT_EQ(mounts.error().code(), core::ErrorCode::kInvalidArgument);
    EXPECT_NE(mounts.error().message().find("line 5"), std::string::npos)
        << mounts.error().message();
  }
}

TEST(MountInfoTest, FindMountReturnsTheTopmostMountAtAPoint) {
  auto mounts = ParseMountInfo(std::string(kTable) +
                               "412 22 0:53 / /mnt/stacked rw - tmpfs a rw\n"
                               "413 412 0:54 / /mnt/stacked ro - tmpfs b rw\n");
  ASSERT_TRUE(mounts);
  const MountEntry* top = FindMount(*mounts, "/mnt/stacked");
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->mount_id, 413);
  EXPECT_EQ(FindMount(*mounts, "/mnt"), nullptr);
  EXPECT_EQ(FindMount(*mounts, "/mnt/with space\ttab\\back")->mount_id, 411);
}

TEST(MountInfoTest, ReadsThisProcessTable) {
  auto mounts = ReadMountInfo();
  ASSERT_TRUE(mounts) << mounts.error().ToString();
  EXPECT_NE(FindMount(*mounts, "/"), nullptr);
  EXPECT_FALSE(ReadMountInfo("/nonexistent/mountinfo"));
}

}  // namespace
}  // namespace modelplane::agent
