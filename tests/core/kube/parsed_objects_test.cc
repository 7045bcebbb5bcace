// core/kube/parsed_objects.h: one parse per object version, a new parse for a new
// version (or a new object at a freed address), and entries of dead objects swept.
#include "core/kube/parsed_objects.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using nlohmann::json;

class ParsedObjectsTest : public ::testing::Test {
 protected:
  int parses_ = 0;
  ParsedObjects<std::string> parsed_{[this](const json& object) -> core::Result<std::string> {
    ++parses_;
    if (!object.contains("name")) {
      return std::unexpected(core::Error(core::ErrorCode::kInvalidArgument, "no name"));
    }
    return object["name"].get<std::string>();
  }};
};

TEST_F(ParsedObjectsTest, ParsesEachVersionOnce) {
  const core::ObjectPtr first = std::make_shared<const json>(json{{"name", "a"}});
  EXPECT_EQ(**parsed_.Get(first), "a");
  EXPECT_EQ(**parsed_.Get(first), "a");
  EXPECT_EQ(parses_, 1);

  // An update replaces the pointer: the new version is parsed, the old one still answers.
  const core::ObjectPtr second = std::make_shared<const json>(json{{"name", "b"}});
  EXPECT_EQ(**parsed_.Get(second), "b");
  EXPECT_EQ(**parsed_.Get(first), "a");
  EXPECT_EQ(parses_, 2);

  // A parse error is kept like a value: the object does not change.
  const core::ObjectPtr bad = std::make_shared<const json>(json::object());
  EXPECT_FALSE(*parsed_.Get(bad));
  EXPECT_FALSE(*parsed_.Get(bad));
  EXPECT_EQ(parses_, 3);
}

TEST_F(ParsedObjectsTest, AnObjectAtTheAddressOfADeadOneIsParsedAgain) {
  for (int round = 0; round < 3000; ++round) {
    // Freed and allocated again, often at the same address: never the dead object's parse.
    const std::string name = "n" + std::to_string(round);
    const core::ObjectPtr object = std::make_shared<const json>(json{{"name", name}});
    ASSERT_EQ(**parsed_.Get(object), name);
  }
  EXPECT_EQ(parses_, 3000);
}

}  // namespace
}  // namespace modelplane::core
