// `modelplane-node-agent fetch` against real MinIO: byte-exact staging from the object store,
// and fallback from sources that fail in the ways real ones do: a shared-filesystem copy with one
// flipped bit (detected, quarantined, fetched again from S3), an object store answering with a
// signature error (wrong secret), and an object store holding a truncated object.
#include <cstdlib>
#include <fstream>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/digest/sha256.h"

namespace modelplane::agent {
namespace {

// NOLINTNEXTLINE(cert-err58-cpp): a test constant; a throw before main ends the test anyway
const std::string kBinary =
    std::string(MODELPLANE_BINARY_DIR) + "/node-agent/modelplane-node-agent";

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

class FetchFromMinioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Env("S3_ENDPOINT_URL").empty() || Env("MODELPLANE_S3_BUCKET").empty()) {
      GTEST_SKIP() << "needs the local control plane's MinIO: eval \"$(e2e/cluster.sh env)\"";
    }
    base_ = std::filesystem::temp_directory_path() /
            fmt::format("fetch-minio-test-{}-{}", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(base_);
    std::filesystem::create_directories(base_ / "model");
    prefix_ = fmt::format("fetch-minio-test/{}-{}", ::getpid(),
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    AddFile("model-00001-of-00002.safetensors", (5 << 20) + 17, 21);
    AddFile("model-00002-of-00002.safetensors", (2 << 20) + 3, 22);
    AddFile("tokenizer.json", 4321, 23);
    ASSERT_EQ(Shell(fmt::format("s5cmd --endpoint-url {} cp '{}/model/*' 's3://{}/{}/' >/dev/null",
                                Env("S3_ENDPOINT_URL"), base_.string(), Env("MODELPLANE_S3_BUCKET"),
                                prefix_)),
              0);
  }
  void TearDown() override { std::filesystem::remove_all(base_); }

  static int Shell(const std::string& command) { return std::system(command.c_str()); }

  void AddFile(const std::string& path, std::size_t size, unsigned seed) {
    std::mt19937 random(seed);
    std::string content(size, '\0');
    for (char& c : content) c = static_cast<char>(random());
    std::ofstream(base_ / "model" / path, std::ios::binary) << content;
    files_.push_back({path, size, core::FormatDigest(core::Sha256Of(content))});
    total_ += size;
  }

  std::string ObjectStoreSource(const std::string& name, const std::string& prefix,
                                const std::string& secret = "") {
    std::string source =
        fmt::format(R"(    - name: {}
      type: objectStore
      objectStore:
        endpoint: {}
        bucket: {}
        prefix: {}
        region: us-east-1
)",
                    name, Env("S3_ENDPOINT_URL"), Env("MODELPLANE_S3_BUCKET"), prefix);
    if (!secret.empty())
      source += fmt::format("      credentialsSecretRef:\n        name: {}\n", secret);
    return source;
  }

  std::filesystem::path WriteRevision(const std::string& sources) {
    std::string yaml = R"(apiVersion: modelplane.io/v1alpha1
kind: ModelRevision
metadata: {name: minio-test, namespace: default}
spec:
  modelName: test
  format: safetensors
  engine: {name: vllm, version: 0.6.3}
  files:
)";
    for (const auto& [path, size, sha] : files_) {
      yaml +=
          fmt::format("    - path: {}\n      size: {}\n      sha256: {}\n      role: {}\n", path,
                      size, sha, path.ends_with(".safetensors") ? "weights" : "tokenizer");
    }
    yaml += "  sources:\n" + sources;
    auto path = base_ / "revision.yaml";
    std::ofstream(path) << yaml;
    return path;
  }

  nlohmann::json Fetch(const std::filesystem::path& revision, int expected_exit = 0,
                       const std::string& extra = "") {
    const auto out = base_ / "report.json";
    const int status = Shell(
        fmt::format("{} fetch --revision {} --cache-root {} --range-size 1Mi "
                    "--log-level error {} >{}",
                    kBinary, revision.string(), (base_ / "cache").string(), extra, out.string()));
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), expected_exit);
    std::ifstream in(out);
    return nlohmann::json::parse(in, nullptr, false);
  }

  void ExpectCacheMatchesManifest() {
    for (const auto& [path, size, sha] : files_) {
      const auto blob = base_ / "cache" / "blobs" / "sha256" / sha.substr(7);
      auto digest = core::Sha256OfFile(blob.string());
      ASSERT_TRUE(digest) << path;
      EXPECT_EQ(core::FormatDigest(*digest), sha) << path;
    }
  }

  std::filesystem::path base_;
  std::string prefix_;
  std::vector<std::tuple<std::string, std::size_t, std::string>> files_;
  std::uint64_t total_ = 0;
};

TEST_F(FetchFromMinioTest, StagesFromTheObjectStoreByteExact) {
  const auto report = Fetch(WriteRevision(ObjectStoreSource("minio", prefix_)));
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report["ready"].get<bool>());
  EXPECT_EQ(report["fetchedBytes"].get<std::uint64_t>(), total_);
  EXPECT_EQ(report["tier"], "objectStore");
  ExpectCacheMatchesManifest();
}

TEST_F(FetchFromMinioTest, FlippedBitOnTheSharedFilesystemIsQuarantinedAndS3Serves) {
  std::filesystem::copy(base_ / "model", base_ / "nfs");
  {
    std::fstream shard(base_ / "nfs" / "model-00001-of-00002.safetensors",
                       std::ios::in | std::ios::out | std::ios::binary);
    shard.seekg(3 << 20);
    const char byte = static_cast<char>(shard.get());
    shard.seekp(3 << 20);
    shard.put(static_cast<char>(byte ^ 0x04));
  }
  const std::string sources = fmt::format(R"(    - name: nfs
      type: sharedFilesystem
      sharedFilesystem:
        path: {}
)",
                                          (base_ / "nfs").string()) +
                              ObjectStoreSource("minio", prefix_);
  const auto report = Fetch(WriteRevision(sources));
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report["ready"].get<bool>()) << report.dump(2);
  EXPECT_EQ(report["quarantines"].get<int>(), 1);
  for (const auto& file : report["files"]) {
    const bool corrupted = file["path"] == "model-00001-of-00002.safetensors";
    EXPECT_EQ(file["tier"], corrupted ? "objectStore" : "sharedFilesystem") << file.dump();
    EXPECT_EQ(file["restarts"].get<int>(), corrupted ? 1 : 0);
  }
  EXPECT_FALSE(std::filesystem::is_empty(base_ / "cache" / "quarantine"));
  ExpectCacheMatchesManifest();
}

TEST_F(FetchFromMinioTest, WrongCredentialsFallBackToTheNextSourceWithTheReason) {
  std::filesystem::create_directories(base_ / "secrets" / "bad");
  std::ofstream(base_ / "secrets" / "bad" / "accessKeyId") << Env("AWS_ACCESS_KEY_ID");
  std::ofstream(base_ / "secrets" / "bad" / "secretAccessKey") << "not-the-secret";
  const auto revision = WriteRevision(ObjectStoreSource("minio-bad-key", prefix_, "bad") +
                                      ObjectStoreSource("minio", prefix_));
  const auto report = Fetch(revision, 0, "--secrets-dir " + (base_ / "secrets").string());
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report["ready"].get<bool>()) << report.dump(2);
  const std::string problems = report["files"][0]["problems"].dump();
  EXPECT_NE(problems.find("SignatureDoesNotMatch"), std::string::npos) << problems;
  ExpectCacheMatchesManifest();
}

TEST_F(FetchFromMinioTest, TruncatedObjectFallsBackAndOnlyBadSourcesFailTheFetch) {
  const std::string short_prefix = prefix_ + "-short";
  std::filesystem::resize_file(base_ / "model" / "model-00002-of-00002.safetensors", 1 << 20);
  ASSERT_EQ(Shell(fmt::format("s5cmd --endpoint-url {} cp '{}/model/*' 's3://{}/{}/' >/dev/null",
                              Env("S3_ENDPOINT_URL"), base_.string(), Env("MODELPLANE_S3_BUCKET"),
                              short_prefix)),
            0);
  auto report = Fetch(WriteRevision(ObjectStoreSource("short", short_prefix) +
                                    ObjectStoreSource("minio", prefix_)));
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report["ready"].get<bool>()) << report.dump(2);
  ExpectCacheMatchesManifest();

  // With the truncated copy alone the fetch fails, says why, and publishes nothing.
  std::filesystem::remove_all(base_ / "cache");
  report = Fetch(WriteRevision(ObjectStoreSource("short", short_prefix)), 1);
  ASSERT_TRUE(report.is_object());
  EXPECT_FALSE(report["ready"].get<bool>());
  EXPECT_NE(report["error"].get<std::string>().find("model-00002-of-00002.safetensors"),
            std::string::npos)
      << report.dump(2);
  EXPECT_TRUE(std::filesystem::is_empty(base_ / "cache" / "revisions" / "sha256"));
}

}  // namespace
}  // namespace modelplane::agent
