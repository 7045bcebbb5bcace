// A safetensors index against the files a revision carries: every shard it names must be there,
// relative to the index's own folder.
#include "core/manifest/shard_index.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

constexpr std::string_view kIndex = R"({
  "metadata": {"total_size": 8192},
  "weight_map": {
    "embed.weight": "model-00001-of-00002.safetensors",
    "layers.0.weight": "model-00001-of-00002.safetensors",
    "lm_head.weight": "model-00002-of-00002.safetensors"
  }
})";

TEST(ShardIndex, NamesItsShardsRelativeToItsFolder) {
  EXPECT_EQ(ShardsNamedByIndex("model.safetensors.index.json", kIndex).value(),
            (std::set<std::string>{"model-00001-of-00002.safetensors",
                                   "model-00002-of-00002.safetensors"}));
  EXPECT_EQ(ShardsNamedByIndex("q4/model.safetensors.index.json", kIndex).value(),
            (std::set<std::string>{"q4/model-00001-of-00002.safetensors",
                                   "q4/model-00002-of-00002.safetensors"}));
  EXPECT_TRUE(IsSafetensorsIndex("q4/model.safetensors.index.json"));
  EXPECT_FALSE(IsSafetensorsIndex("pytorch_model.bin.index.json"));
}

TEST(ShardIndex, NamesTheShardsAFileSetLacks) {
  const std::set<std::string> both = {"config.json", "model-00001-of-00002.safetensors",
                                      "model-00002-of-00002.safetensors"};
  EXPECT_EQ(ShardsMissingFrom("model.safetensors.index.json", kIndex, both).value(),
            std::vector<std::string>{});
  EXPECT_EQ(ShardsMissingFrom("model.safetensors.index.json", kIndex,
                              {"model-00001-of-00002.safetensors"})
                .value(),
            std::vector<std::string>{"model-00002-of-00002.safetensors"});
  EXPECT_FALSE(ShardsMissingFrom("model.safetensors.index.json", "[]", both).has_value());
}

TEST(ShardIndex, RefusesWhatIsNotAnIndex) {
  for (const std::string_view text :
       {std::string_view("not json"), std::string_view(R"({"metadata": {}})"),
        std::string_view(R"({"weight_map": {"w": 3}})"),
        std::string_view(R"({"weight_map": {"w": "a", "w": "b"}})")}) {
    auto shards = ShardsNamedByIndex("model.safetensors.index.json", text);
    ASSERT_FALSE(shards.has_value()) << text;
    EXPECT_NE(shards.error().message().find("is not a safetensors index"), std::string::npos);
  }
}

}  // namespace
}  // namespace modelplane::core
