// hf:// references as people type them: the default branch, a tag, a commit, a PR ref, and the
// mistakes that must be refused before anything is asked of the hub.
#include "core/hub/hub_reference.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(ParseHubReference, RepositoryAndRevision) {
  EXPECT_EQ(ParseHubReference("hf://acme/tiny").value(),
            (HubReference{"huggingFace", "acme/tiny", "main"}));
  EXPECT_EQ(ParseHubReference("hf://acme/tiny@v1.0").value().revision, "v1.0");
  EXPECT_EQ(ParseHubReference("hf://gpt2@refs/pr/1").value(),
            (HubReference{"huggingFace", "gpt2", "refs/pr/1"}));
  const std::string commit(40, 'a');
  EXPECT_EQ(ParseHubReference("hf://acme/tiny@" + commit).value().revision, commit);
  EXPECT_EQ(ParseHubReference("modelscope://qwen/Qwen2-0.5B").value(),
            (HubReference{"modelScope", "qwen/Qwen2-0.5B", "master"}));
  EXPECT_EQ(ParseHubReference("modelscope://qwen/Qwen2-0.5B@v1.0.0").value().revision, "v1.0.0");
}

TEST(ParseHubReference, RefusesWhatIsNotAReference) {
  for (const char* text :
       {"acme/tiny", "https://huggingface.co/acme/tiny", "hf://", "hf://acme/tiny@",
        "hf://acme/tiny/extra", "hf://acme/-tiny", "hf://acme/ti..ny", "hf://acme/tiny@a b",
        "hf://acme/tiny@../x", "hf://acme/tiny@caf\xc3\xa9", "s3://bucket/prefix"}) {
    auto parsed = ParseHubReference(text);
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument) << text;
    EXPECT_NE(parsed.error().message().find("hf://org/name[@revision]"), std::string::npos)
        << parsed.error().message();
  }
  EXPECT_FALSE(ParseHubReference("hf://acme/tiny@" + std::string(257, 'v')).has_value());
}

}  // namespace
}  // namespace modelplane::core
