// Manifests from a folder: roles, digests (checked against the checkpoint generator's own
// summary), symlink rules, and YAML that core/api parses and validates.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "core/api/model_revision_validation.h"
#include "core/digest/sha256.h"
#include "core/manifest/manifest_yaml.h"
#include "core/manifest/revision_builder.h"
#include "core/signing/model_signature_verifier.h"
#include "node-agent/manifest/manifest_builder.h"
#include "node-agent/manifest/manifest_command.h"
#include "tests/node-agent/sources/test_files.h"
#include "tests/support/signing_fixtures.h"

namespace modelplane::agent {
namespace {

using core::BuildRevision;
using core::ErrorCode;
using core::RevisionFromYaml;
using core::RevisionToYaml;
using testing::PatternBytes;
using testing::TempFolder;

std::string RunCapture(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buffer[4096];
  while (std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, got);
  ::pclose(pipe);
  return out;
}

core::api::ModelSource SharedSource(const std::string& path) {
  core::api::ModelSource source;
  source.name = "shared";
  source.type = "sharedFilesystem";
  source.shared_filesystem = core::api::SharedFilesystemLocation{path};
  return source;
}

core::api::ModelRevisionSpec Defaults() {
  core::api::ModelRevisionSpec spec;
  spec.format = "safetensors";
  spec.engine = {.name = "vllm", .version = "0.6.3"};
  return spec;
}

TEST(ManifestFromFolder, MatchesTheCheckpointGeneratorsSummary) {
  TempFolder folder;
  const std::string out = folder.path() + "/ckpt";
  const std::string summary_text =
      RunCapture(fmt::format("python3 {}/e2e/checkpoint/generate.py --out {} --size 2MiB "
                             "--shards 3 --seed 5 --summary",
                             MODELPLANE_SOURCE_DIR, out));
  const auto summary = nlohmann::json::parse(summary_text, nullptr, false);
  ASSERT_FALSE(summary.is_discarded()) << summary_text;
  folder.Write("ckpt/README.md", "not part of the model");
  folder.Write("ckpt/.git/config", "tooling");

  for (const std::size_t threads : {1u, 4u}) {
    auto listing = ListFolderFiles(out, {.threads = threads, .read_size = 64 * 1024});
    ASSERT_TRUE(listing.has_value()) << listing.error().ToString();
    ASSERT_EQ(listing->files.size(), summary["files"].size());
    for (const auto& expected : summary["files"]) {
      const auto found = std::find_if(
          listing->files.begin(), listing->files.end(),
          [&](const auto& f) { return f.path == expected["path"].get<std::string>(); });
      ASSERT_NE(found, listing->files.end()) << expected.dump();
      EXPECT_EQ(found->size, expected["size"].get<std::int64_t>());
      EXPECT_EQ(found->sha256, "sha256:" + expected["sha256"].get<std::string>());
      EXPECT_EQ(found->role, expected["role"].get<std::string>());
    }
    EXPECT_EQ(listing->skipped, (std::vector<std::string>{".git", "README.md"}));
  }
}

TEST(ManifestFromFolder, YamlPassesValidationAndRoundTrips) {
  TempFolder folder;
  folder.Write("m/config.json", "{\"layers\": 2}");
  folder.Write("m/model.safetensors", PatternBytes(100'000));
  folder.Write("m/sub dir/tokenizer.json", "{}");
  auto listing = ListFolderFiles(folder.path() + "/m", {});
  ASSERT_TRUE(listing.has_value()) << listing.error().ToString();
  auto revision = BuildRevision("llama-r1", "models", Defaults(), listing->files,
                                SharedSource(folder.path() + "/m"));
  ASSERT_TRUE(revision.has_value()) << revision.error().ToString();
  const std::string yaml = RevisionToYaml(*revision);
  auto parsed = RevisionFromYaml(yaml);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString() << "\n" << yaml;
  EXPECT_TRUE(core::api::ValidateModelRevisionSpec(parsed->spec).empty()) << yaml;
  EXPECT_EQ(*parsed, *revision) << yaml;
  EXPECT_NE(yaml.find("kind: ModelRevision"), std::string::npos);
  EXPECT_NE(yaml.find("version: \"0.6.3\""), std::string::npos) << yaml;
}

TEST(ManifestFromFolder, SymlinkInsideIsHashedSymlinkOutsideIsRefused) {
  TempFolder folder;
  folder.Write("m/blobs/abc", PatternBytes(5000));
  folder.Write("outside/model.safetensors", PatternBytes(5000));
  std::filesystem::create_symlink("blobs/abc", folder.path() + "/m/model.safetensors");
  auto inside = ListFolderFiles(folder.path() + "/m", {});
  ASSERT_TRUE(inside.has_value()) << inside.error().ToString();
  ASSERT_EQ(inside->files.size(), 1u);
  EXPECT_EQ(inside->files[0].sha256,
            core::FormatDigest(core::Sha256OfFile(folder.path() + "/m/blobs/abc").value()));

  std::filesystem::create_symlink("../../outside/model.safetensors",
                                  folder.path() + "/m/blobs/config.json");
  auto escaping = ListFolderFiles(folder.path() + "/m", {});
  ASSERT_FALSE(escaping.has_value());
  EXPECT_EQ(escaping.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(escaping.error().message().find("blobs/config.json"), std::string::npos);
}

TEST(ManifestFromFolder, TinyWeightsFileFailsValidation) {
  TempFolder folder;
  folder.Write("m/model.safetensors", "tiny");
  auto listing = ListFolderFiles(folder.path() + "/m", {});
  ASSERT_TRUE(listing.has_value());
  auto revision =
      BuildRevision("r", "ns", Defaults(), listing->files, SharedSource(folder.path() + "/m"));
  ASSERT_FALSE(revision.has_value());
  EXPECT_EQ(revision.error().code(), ErrorCode::kInvalidArgument);
}

TEST(ManifestCommand, WritesAValidManifestFile) {
  TempFolder folder;
  folder.Write("m/config.json", "{}");
  folder.Write("m/model.safetensors", PatternBytes(4096));
  CLI::App app;
  Subcommand command = AddManifestCommand(app);
  const std::string output = folder.path() + "/out.yaml";
  app.parse(fmt::format("manifest --from {}/m --name r1 -o {} --engine-version 1.0", folder.path(),
                        output),
            false);
  ASSERT_TRUE(command.app->parsed());
  EXPECT_EQ(command.run(), 0);
  std::ifstream in(output);
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = RevisionFromYaml(text.str());
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString() << text.str();
  EXPECT_EQ(parsed->metadata.name, "r1");
  EXPECT_EQ(parsed->spec.files.size(), 2u);
  EXPECT_EQ(parsed->spec.sources.at(0).type, "sharedFilesystem");
  EXPECT_TRUE(core::api::ValidateModelRevisionSpec(parsed->spec).empty());
}

// The model-signing fixtures (tests/core/signing/fixtures): a folder and the bundle the real
// model_signing tool made for it. The manifest of the folder carries the bundle, and the files
// it lists are exactly the ones the bundle signed.
TEST(ManifestCommand, PutsASignatureIntoSpecSignaturesThatMatchesTheFiles) {
  const std::string fixtures = std::string(MODELPLANE_SOURCE_DIR) + "/tests/core/signing/fixtures";
  TempFolder folder;
  const std::string output = folder.path() + "/out.yaml";
  CLI::App app;
  Subcommand command = AddManifestCommand(app);
  app.parse(fmt::format("manifest --from {}/model --name r1 -o {} --signature {}/{}", fixtures,
                        output, fixtures, "bundle-key-p256.json"),
            false);
  ASSERT_TRUE(command.app->parsed());
  EXPECT_EQ(command.run(), 0);
  std::ifstream in(output);
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = RevisionFromYaml(text.str());
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString() << text.str();
  ASSERT_EQ(parsed->spec.signatures.size(), 1U);
  EXPECT_EQ(parsed->spec.signatures[0].bundle,
            modelplane::testing::SigningFixture("bundle-key-p256.json"));

  core::SignaturePolicy policy;
  policy.signers.push_back(
      {.name = "release", .public_key = modelplane::testing::SigningFixture("key-p256.pub.pem")});
  auto verified = core::VerifyModelSignatures(&policy, "default", parsed->spec,
                                              std::chrono::system_clock::now());
  ASSERT_TRUE(verified) << verified.error().reason << ": " << verified.error().message;
  ASSERT_EQ(verified->size(), 1U);
  EXPECT_EQ((*verified)[0].signer, "release");
}

TEST(ManifestCommand, RefusesAMissingSignatureFile) {
  TempFolder folder;
  folder.Write("m/config.json", "{}");
  CLI::App app;
  const Subcommand command = AddManifestCommand(app);
  EXPECT_THROW(app.parse(fmt::format("manifest --from {}/m --name r1 --signature {}/none.sig",
                                     folder.path(), folder.path()),
                         false),
               CLI::ValidationError);
}

}  // namespace
}  // namespace modelplane::agent
