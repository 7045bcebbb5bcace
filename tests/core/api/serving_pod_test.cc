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

TEST(ServingPodTest, MountPathFromTheAnnotationOrTheDefault) {
  EXPECT_EQ(MountPathOf({{"modelplane.io/mount-path", "/weights"}}, "llama-r1"), "/weights");
  EXPECT_EQ(MountPathOf(nlohmann::json::object(), "llama-r1"), "/models/llama-r1");
  EXPECT_EQ(MountPathOf(nullptr, "llama-r1"), "/models/llama-r1");
}

TEST(ServingPodTest, AnnotationListsAreTrimmedAndSkipEmptyItems) {
  EXPECT_EQ(SplitAnnotationList(" a, b ,,\tc,"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitAnnotationList("").empty());
  EXPECT_TRUE(SplitAnnotationList(" , ").empty());
}

TEST(ServingPodTest, AdaptersAreRevisionsOfThePodsNamespaceInTheirOrder) {
  auto adapters = ParseAdaptersAnnotation("sql-lora, models/chat-lora", "models", "llama-r1");
  ASSERT_TRUE(adapters) << adapters.error().ToString();
  ASSERT_EQ(adapters->size(), 2U);
  EXPECT_EQ((*adapters)[0], (RevisionReference{.namespace_name = "models", .name = "sql-lora"}));
  EXPECT_EQ((*adapters)[1], (RevisionReference{.namespace_name = "models", .name = "chat-lora"}));
  auto none = ParseAdaptersAnnotation("", "models", "llama-r1");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

// The same wall as the revision's: an adapter of another tenant is never mounted, whichever
// component reads the annotation.
TEST(ServingPodTest, AnAdapterOfAnotherNamespaceIsRefused) {
  auto adapters = ParseAdaptersAnnotation("sql-lora,shared/chat-lora", "models", "llama-r1");
  ASSERT_FALSE(adapters);
  EXPECT_EQ(adapters.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(adapters.error().message(),
            "modelplane.io/adapters names shared/chat-lora: a pod may use only a ModelRevision "
            "in its own namespace (models)");
}

TEST(ServingPodTest, AdaptersRefusedWithTheirReason) {
  const std::string nine = "a0,a1,a2,a3,a4,a5,a6,a7,a8";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"sql_lora", "annotation modelplane.io/adapters must be <name> or <namespace>/<name>"},
      {"sql-lora,sql-lora", "names sql-lora twice"},
      {"sql-lora,models/sql-lora", "names sql-lora twice"},
      {"llama-r1", "names llama-r1, the pod's own revision"},
      {nine, "names 9 adapters; a pod may name at most 8"},
  };
  for (const auto& [value, message] : refused) {
    auto adapters = ParseAdaptersAnnotation(value, "models", "llama-r1");
    ASSERT_FALSE(adapters) << value;
    EXPECT_EQ(adapters.error().code(), ErrorCode::kInvalidArgument) << value;
    EXPECT_NE(adapters.error().message().find(message), std::string::npos)
        << adapters.error().message();
  }
  EXPECT_TRUE(ParseAdaptersAnnotation("a0,a1,a2,a3,a4,a5,a6,a7", "models", "llama-r1"));
}

TEST(ServingPodTest, AdaptersAreMountedBesideTheBaseOutsideItsMount) {
  EXPECT_EQ(AdapterMountPath("/models/llama-r1", "sql-lora"), "/models/adapters/sql-lora");
  EXPECT_EQ(AdapterMountPath("/srv/weights/base", "sql-lora"), "/srv/weights/adapters/sql-lora");
  EXPECT_EQ(AdapterMountPath("/weights", "sql-lora"), "/adapters/sql-lora");
  EXPECT_EQ(AdapterVolumeName(0), "modelplane-adapter-0");
  EXPECT_EQ(AdapterVolumeName(7), "modelplane-adapter-7");
}

// New weights are a new digest, so a new name: nothing keyed by the name meets old results.
TEST(ServingPodTest, TheEngineNameOfAnAdapterComesFromItsDigest) {
  const std::string first = "sha256:0123456789abcdef" + std::string(48, '0');
  const std::string second = "sha256:fedcba9876543210" + std::string(48, '0');
  EXPECT_EQ(AdapterEngineName("sql-lora", first), "sql-lora-0123456789ab");
  EXPECT_EQ(AdapterEngineName("sql-lora", second), "sql-lora-fedcba987654");
}

TEST(ServingPodTest, LoraModulesInVllmsFormat) {
  EXPECT_EQ(
      LoraModulesValue({{.name = "sql-lora-0123456789ab", .path = "/models/adapters/sql-lora"},
                        {.name = "chat-lora-fedcba987654", .path = "/models/adapters/chat-lora"}}),
      "sql-lora-0123456789ab=/models/adapters/sql-lora "
      "chat-lora-fedcba987654=/models/adapters/chat-lora");
  EXPECT_EQ(LoraModulesValue({}), "");
}

}  // namespace
}  // namespace modelplane::core::api
