#include "core/api/serving_pod.h"

#include <gtest/gtest.h>

namespace modelplane::core::api {
namespace {

TEST(ServingPodTest, NameAloneIsInThePodsNamespace) {
  auto reference = ParseRevisionAnnotation("llama-r1", "models");
  ASSERT_TRUE(reference) << reference.error().ToString();
  EXPECT_EQ(reference->namespace_name, "models");
  EXPECT_EQ(reference->name, "llama-r1");
}

TEST(ServingPodTest, NamespaceAndName) {
  auto reference = ParseRevisionAnnotation("shared/llama.r1", "models");
  ASSERT_TRUE(reference);
  EXPECT_EQ(reference->namespace_name, "shared");
  EXPECT_EQ(reference->name, "llama.r1");
}

TEST(ServingPodTest, RefusesWhatNamesNothing) {
  for (const char* value :
       {"", "/", "a/", "/b", "a/b/c", "Llama", "-llama", "llama-", "a b", "llama_r1"}) {
    auto reference = ParseRevisionAnnotation(value, "models");
    ASSERT_FALSE(reference) << value;
    EXPECT_EQ(reference.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(reference.error().message().find("modelplane.io/revision"), std::string::npos);
  }
  EXPECT_FALSE(ParseRevisionAnnotation(std::string(254, 'a'), "models"));
  EXPECT_TRUE(ParseRevisionAnnotation(std::string(253, 'a'), "models"));
}

TEST(ServingPodTest, DefaultMountPath) {
  EXPECT_EQ(DefaultMountPath("llama-r1"), "/models/llama-r1");
}

}  // namespace
}  // namespace modelplane::core::api
