#include "core/kube/resource_version.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(ResourceVersionTest, TheLongerNumberIsTheLaterWrite) {
  EXPECT_EQ(CompareResourceVersions("10", "9"), std::strong_ordering::greater);
  EXPECT_EQ(CompareResourceVersions("9", "10"), std::strong_ordering::less);
  EXPECT_EQ(CompareResourceVersions("123", "123"), std::strong_ordering::equal);
  EXPECT_EQ(CompareResourceVersions("124", "123"), std::strong_ordering::greater);
}

TEST(ResourceVersionTest, NumbersBeyondSixtyFourBitsStillCompare) {
  EXPECT_EQ(CompareResourceVersions("100000000000000000000000", "99999999999999999999999"),
            std::strong_ordering::greater);
}

TEST(ResourceVersionTest, VersionsNotOfTheComparableFormAreUnknown) {
  EXPECT_FALSE(CompareResourceVersions("", "1"));
  EXPECT_FALSE(CompareResourceVersions("1", ""));
  EXPECT_FALSE(CompareResourceVersions("0", "1"));     // zero is never handed out
  EXPECT_FALSE(CompareResourceVersions("012", "13"));  // leading zero
  EXPECT_FALSE(CompareResourceVersions("12a", "13"));
  EXPECT_FALSE(CompareResourceVersions("-5", "13"));
  EXPECT_FALSE(CompareResourceVersions("opaque", "opaque"));
}

}  // namespace
}  // namespace modelplane::core
