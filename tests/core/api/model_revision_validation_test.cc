#include "core/api/model_revision_validation.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/api/test_support.h"

namespace modelplane::core::api {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ModelRevisionSpec SampleSpec() {
  auto revision =
      ModelRevisionFromJson(testing::LoadYamlAsJson("crds/examples/modelrevision-sample.yaml"));
  EXPECT_TRUE(revision.has_value());
  return revision->spec;
}

::testing::Matcher<ValidationProblem> Problem(ValidationReason reason, const std::string& path) {
  return ::testing::AllOf(Field(&ValidationProblem::reason, reason),
                          Field(&ValidationProblem::path, path));
}

TEST(ModelRevisionValidationTest, SampleIsValid) {
  EXPECT_THAT(ValidateModelRevisionSpec(SampleSpec()), IsEmpty());
  EXPECT_TRUE(ProblemsToStatus({}).has_value());
}

TEST(ModelRevisionValidationTest, ReportsMalformedSha256) {
  for (const std::string& bad :
       {std::string(""), std::string(64, 'a'), "sha256:" + std::string(63, 'a'),
        "sha256:" + std::string(65, 'a'), "sha256:" + std::string(64, 'A'),
        "sha512:" + std::string(64, 'a'), "sha256:" + std::string(63, 'a') + "g"}) {
    ModelRevisionSpec spec = SampleSpec();
    spec.files[2].sha256 = bad;
    EXPECT_THAT(ValidateModelRevisionSpec(spec),
                ElementsAre(Problem(ValidationReason::kMalformedDigest, "spec.files[2].sha256")))
        << bad;
  }
}

TEST(ModelRevisionValidationTest, HubSourcesNameARepositoryAtACommit) {
  ModelRevisionSpec spec = SampleSpec();
  ModelSource hub{.name = "hub", .type = std::string(kSourceHuggingFace)};
  hub.hugging_face = HubLocation{.repository = "meta-llama/Llama-3.1-8B",
                                 .commit = "0123456789abcdef0123456789abcdef01234567"};
  spec.sources = {hub};
  EXPECT_THAT(ValidateModelRevisionSpec(spec), IsEmpty());
  spec.sources[0].hugging_face->commit = "main";
  EXPECT_THAT(
      ValidateModelRevisionSpec(spec),
      ElementsAre(Problem(ValidationReason::kInvalidValue, "spec.sources[0].huggingFace.commit")));
  spec.sources[0].hugging_face->commit = std::string(40, 'A');
  EXPECT_THAT(ValidateModelRevisionSpec(spec), ::testing::SizeIs(1));
  spec.sources[0].hugging_face->commit = std::string(40, 'a');
  for (const std::string bad :
       {"org/../x", "org/name/extra", "-org/name", "org/na--me", "", "org/name?x", "org name/x"}) {
    spec.sources[0].hugging_face->repository = bad;
    EXPECT_THAT(ValidateModelRevisionSpec(spec),
                ElementsAre(Problem(ValidationReason::kInvalidValue,
                                    "spec.sources[0].huggingFace.repository")))
        << bad;
  }
  spec.sources[0].hugging_face->repository = "gpt2";
  spec.sources[0].hugging_face->endpoint = "https://hf-mirror.com/sub";
  EXPECT_THAT(ValidateModelRevisionSpec(spec),
              ElementsAre(Problem(ValidationReason::kInvalidValue,
                                  "spec.sources[0].huggingFace.endpoint")));
  // The location must match the type.
  spec.sources[0].type = std::string(kSourceModelScope);
  EXPECT_THAT(ValidateModelRevisionSpec(spec),
              ElementsAre(Problem(ValidationReason::kSourceLocationMismatch, "spec.sources[0]")));
}

TEST(ModelRevisionValidationTest, ReportsDuplicatePaths) {
  ModelRevisionSpec spec = SampleSpec();
  spec.files[3].path = spec.files[1].path;
  EXPECT_THAT(ValidateModelRevisionSpec(spec),
              ElementsAre(Problem(ValidationReason::kDuplicatePath, "spec.files[3].path")));
}

TEST(ModelRevisionValidationTest, ReportsUnsafePaths) {
  for (const std::string& bad :
       {std::string(""), std::string("../etc/passwd"), std::string("a/../../b"),
        std::string("/abs/path"), std::string("a//b"), std::string("a/"), std::string("./a"),
        std::string("a/."), std::string(".."), std::string("a\\b"), std::string("a\0b", 3),
        std::string("a\nb"), std::string(513, 'a')}) {
    ModelRevisionSpec spec = SampleSpec();
    spec.files[0].path = bad;
    EXPECT_THAT(ValidateModelRevisionSpec(spec),
                ElementsAre(Problem(ValidationReason::kUnsafePath, "spec.files[0].path")))
        << bad;
  }
  for (const char* good : {"a", ".hidden", "..a", "...", "dir/sub/file.bin", "a b"}) {
    EXPECT_EQ(CheckRelativePath(good), "") << good;
  }
}

TEST(ModelRevisionValidationTest, ReportsUnknownRoleAndFormat) {
  ModelRevisionSpec spec = SampleSpec();
  spec.files[0].role = "Weights";
  spec.format = "gguf";
  EXPECT_THAT(ValidateModelRevisionSpec(spec),
              ElementsAre(Problem(ValidationReason::kUnknownRole, "spec.files[0].role"),
                          Problem(ValidationReason::kUnknownFormat, "spec.format")));
}

TEST(ModelRevisionValidationTest, ReportsBadSizes) {
  ModelRevisionSpec spec = SampleSpec();
  spec.files[0].size = -1;                     // config
  spec.files[1].size = 0;                      // weights
  spec.files[2].size = std::int64_t{1} << 51;  // weights, over 1 PiB
  spec.files[3].size = 0;                      // index: empty is allowed
  EXPECT_THAT(ValidateModelRevisionSpec(spec),
              ElementsAre(Problem(ValidationReason::kInvalidSize, "spec.files[0].size"),
                          Problem(ValidationReason::kInvalidSize, "spec.files[1].size"),
                          Problem(ValidationReason::kInvalidSize, "spec.files[2].size")));
}

TEST(ModelRevisionValidationTest, ReportsNoFilesAndNoSources) {
  ModelRevisionSpec spec = SampleSpec();
  spec.files.clear();
  spec.sources.clear();
  EXPECT_THAT(ValidateModelRevisionSpec(spec),
              ElementsAre(Problem(ValidationReason::kNoFiles, "spec.files"),
                          Problem(ValidationReason::kNoSources, "spec.sources")));
}

TEST(ModelRevisionValidationTest, ReportsSourceProblems) {
  ModelRevisionSpec spec = SampleSpec();
  spec.sources[0].type = "ftp";
  spec.sources[1].http.reset();
  spec.sources.push_back(spec.sources[1]);
  spec.sources[2].type = "sharedFilesystem";
  spec.sources[2].shared_filesystem = SharedFilesystemLocation{"/mnt/../etc"};
  EXPECT_THAT(
      ValidateModelRevisionSpec(spec),
      ElementsAre(Problem(ValidationReason::kUnknownSourceType, "spec.sources[0].type"),
                  Problem(ValidationReason::kSourceLocationMismatch, "spec.sources[1]"),
                  Problem(ValidationReason::kUnsafePath, "spec.sources[2].sharedFilesystem.path"),
                  Problem(ValidationReason::kDuplicateSourceName, "spec.sources[2].name")));
}

TEST(ModelRevisionValidationTest, SourceFieldsThatReachAUrlFollowTheirGrammar) {
  ModelRevisionSpec spec = SampleSpec();
  ASSERT_EQ(spec.sources[0].type, "objectStore");
  ObjectStoreLocation& store = *spec.sources[0].object_store;
  store.region = "evil.example:443#";
  store.bucket = "My_Bucket";
  store.endpoint = "http://user@minio:9000";
  store.prefix = "../other";
  spec.sources[1].http->base_url = "https://origin.example/models?token=x";
  EXPECT_THAT(
      ValidateModelRevisionSpec(spec),
      ElementsAre(Problem(ValidationReason::kInvalidValue, "spec.sources[0].objectStore.bucket"),
                  Problem(ValidationReason::kInvalidValue, "spec.sources[0].objectStore.endpoint"),
                  Problem(ValidationReason::kInvalidValue, "spec.sources[0].objectStore.region"),
                  Problem(ValidationReason::kInvalidValue, "spec.sources[0].objectStore.prefix"),
                  Problem(ValidationReason::kInvalidValue, "spec.sources[1].http.baseURL")));
}

TEST(ModelRevisionValidationTest, ReportsEveryProblemAtOnceInTheStatus) {
  ModelRevisionSpec spec = SampleSpec();
  spec.files[3].sha256 = "sha256:xyz";
  spec.parallelism.tensor_parallel = 0;
  spec.engine.version.clear();
  spec.retention->rollback_window = "1 day";
  spec.prestage->nodes = -2;
  const auto problems = ValidateModelRevisionSpec(spec);
  EXPECT_EQ(problems.size(), 5u);
  auto status = ProblemsToStatus(problems);
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(status.error().message(),
              HasSubstr("spec.files[3].sha256: must be sha256:<64 lower-case hex>"));
  EXPECT_THAT(status.error().message(),
              HasSubstr("; spec.parallelism.tensorParallel: must be between 1 and 1024"));
  EXPECT_THAT(status.error().message(), HasSubstr("spec.engine.version: is required"));
  EXPECT_THAT(status.error().message(), HasSubstr("spec.retention.rollbackWindow: must be a"));
  EXPECT_THAT(status.error().message(), HasSubstr("spec.prestage.nodes: must be between"));
  EXPECT_EQ(ValidationReasonName(problems[0].reason), "MalformedDigest");
}

}  // namespace
}  // namespace modelplane::core::api
