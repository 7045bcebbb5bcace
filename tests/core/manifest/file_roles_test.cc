// Roles by file name alone, as the folder manifest and the Hub import both infer them.
#include "core/manifest/file_roles.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(RoleForPath, ByFileName) {
  EXPECT_EQ(RoleForPath("model-00001-of-00002.safetensors"), "weights");
  EXPECT_EQ(RoleForPath("sub/model.safetensors.index.json"), "index");
  EXPECT_EQ(RoleForPath("config.json"), "config");
  EXPECT_EQ(RoleForPath("generation_config.json"), "config");
  EXPECT_EQ(RoleForPath("tokenizer.json"), "tokenizer");
  EXPECT_EQ(RoleForPath("tokenizer_config.json"), "tokenizer");
  EXPECT_EQ(RoleForPath("special_tokens_map.json"), "tokenizer");
  EXPECT_EQ(RoleForPath("merges.txt"), "tokenizer");
  EXPECT_EQ(RoleForPath("quantize_config.json"), "quantization");
  EXPECT_EQ(RoleForPath("lora/adapter_model.safetensors"), "adapter");
  EXPECT_EQ(RoleForPath("lora/adapter_config.json"), "adapter");
  EXPECT_EQ(RoleForPath("README.md"), std::nullopt);
  EXPECT_EQ(RoleForPath("pytorch_model.bin"), std::nullopt);
  EXPECT_EQ(RoleForPath(".hidden.safetensors"), std::nullopt);
}

}  // namespace
}  // namespace modelplane::core
