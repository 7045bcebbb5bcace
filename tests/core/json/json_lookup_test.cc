#include "core/json/json_lookup.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using nlohmann::json;

TEST(JsonLookupTest, FindsMembersAndToleratesWrongShapes) {
  const json object = json::parse(R"({"spec": {"replicas": 3, "paused": true, "name": "x",
      "selector": null, "list": [1], "labels": {"a.b/c": "d"}}})");
  ASSERT_NE(FindMember(object, {"spec", "replicas"}), nullptr);
  EXPECT_EQ(IntegerMember(object, {"spec", "replicas"}), 3);
  EXPECT_EQ(IntegerMember(object, {"spec", "name"}, -1), -1) << "a string is not an integer";
  EXPECT_TRUE(BoolMember(object, {"spec", "paused"}));
  EXPECT_FALSE(BoolMember(object, {"spec", "replicas"}));
  EXPECT_EQ(StringMember(object, {"spec", "name"}), "x");
  EXPECT_EQ(StringMember(object, {"spec", "labels", "a.b/c"}), "d");
  EXPECT_EQ(FindMember(object, {"spec", "selector"}), nullptr) << "null counts as absent";
  EXPECT_EQ(FindMember(object, {"spec", "list", "0"}), nullptr) << "arrays are not walked";
  EXPECT_EQ(FindMember(object, {"spec", "name", "deeper"}), nullptr);
  EXPECT_EQ(FindMember(json("text"), {"spec"}), nullptr);
  EXPECT_EQ(FindMember(object, {}), &object);
}

}  // namespace
}  // namespace modelplane::core
