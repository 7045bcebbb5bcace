#include "node-agent/csi/target_path.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

// NOLINTNEXTLINE(cert-err58-cpp): a test constant; a throw before main ends the test anyway
const std::filesystem::path kRoot = "/var/lib/kubelet/pods";

TEST(TargetPathTest, AcceptsNormalizedPathsBelowTheRoot) {
  EXPECT_TRUE(CheckTargetPath("/var/lib/kubelet/pods/u1/volumes/kubernetes.io~csi/w/mount", kRoot));
  EXPECT_TRUE(CheckTargetPath("/var/lib/kubelet/pods/x", kRoot));
}

TEST(TargetPathTest, RefusesEverythingElseSayingWhy) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "absolute"},
      {"relative/path", "absolute"},
      {"/var/lib/kubelet/pods", "below"},
      {"/var/lib/kubelet/podsx/a", "below"},
      {"/etc", "below"},
      {"/var/lib/kubelet/pods/../../../../etc", "normalized"},
      {"/var/lib/kubelet/pods/./a", "normalized"},
      {"/var/lib/kubelet/pods//a", "normalized"},
      {"/var/lib/kubelet/pods/a/", "ends with"},
      {std::string("/var/lib/kubelet/pods/a\0b", 25), "NUL"},
      {"/var/lib/kubelet/pods/" + std::string(5000, 'a'), "longer"},
  };
  for (const auto& [path, why] : cases) {
    auto checked = CheckTargetPath(path, kRoot);
    ASSERT_FALSE(checked) << path;
    EXPECT_EQ(checked.error().code(), core::ErrorCode::kInvalidArgument);
    EXPECT_NE(checked.error().message().find(why), std::string::npos)
        << path << ": " << checked.error().message();
  }
}

}  // namespace
}  // namespace modelplane::agent
