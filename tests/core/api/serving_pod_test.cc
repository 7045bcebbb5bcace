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

TEST(ServingPodTest, NamespaceAndNameOfThePodsOwnNamespace) {
  auto reference = ParseRevisionAnnotation("models/llama.r1", "models");
  ASSERT_TRUE(reference);
  EXPECT_EQ(reference->namespace_name, "models");
  EXPECT_EQ(reference->name, "llama.r1");
}

// Every component reads the annotation here, so a pod whose annotation was edited after
// admission to name another namespace's revision borrows nothing anywhere.
TEST(ServingPodTest, ARevisionOfAnotherNamespaceIsRefused) {
  auto reference = ParseRevisionAnnotation("shared/llama.r1", "models");
  ASSERT_FALSE(reference);
  EXPECT_EQ(reference.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(reference.error().message(),
            "modelplane.io/revision names shared/llama.r1: a pod may use only a ModelRevision in "
            "its own namespace (models)");
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
