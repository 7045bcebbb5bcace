// Choosing files the way huggingface_hub's allow_patterns / ignore_patterns do: one
// quantization of several, a folder, everything but a format.
#include "core/manifest/file_selection.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(FileSelection, NoPatternsChooseEverything) {
  const FileSelection all({}, {});
  EXPECT_TRUE(all.Chooses("config.json"));
  EXPECT_TRUE(all.Chooses("deep/folder/model.safetensors"));
}

TEST(FileSelection, IncludesPickAndExcludesDrop) {
  const FileSelection q4({"*q4_k_m*", "*.json"}, {"*.bin"});
  EXPECT_TRUE(q4.Chooses("model-q4_k_m-00001-of-00002.safetensors"));
  EXPECT_FALSE(q4.Chooses("model-q8_0-00001-of-00002.safetensors"));
  EXPECT_TRUE(q4.Chooses("config.json"));
  EXPECT_FALSE(q4.Chooses("pytorch_model-q4_k_m.bin"));  // exclude wins over include
}

TEST(FileSelection, StarCrossesFoldersAsPythonsFnmatch) {
  const FileSelection weights({"*.safetensors"}, {});
  EXPECT_TRUE(weights.Chooses("sub/model.safetensors"));
  EXPECT_FALSE(weights.Chooses("model.safetensors.index.json"));
  EXPECT_TRUE(FileSelection({"model-0000[12]-*"}, {}).Chooses("model-00002-of-00003.safetensors"));
  EXPECT_FALSE(FileSelection({"model-0000[12]-*"}, {}).Chooses("model-00003-of-00003.safetensors"));
  EXPECT_TRUE(FileSelection({"?onfig.json"}, {}).Chooses("config.json"));
}

TEST(FileSelection, AFolderPatternMeansEverythingUnderIt) {
  const FileSelection folder({"fp8/"}, {"fp8/extra/"});
  EXPECT_TRUE(folder.Chooses("fp8/model.safetensors"));
  EXPECT_FALSE(folder.Chooses("fp8/extra/notes.json"));
  EXPECT_FALSE(folder.Chooses("bf16/model.safetensors"));
}

}  // namespace
}  // namespace modelplane::core
