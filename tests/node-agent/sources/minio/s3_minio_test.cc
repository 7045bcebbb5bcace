// S3Client, S3RangeSource and the S3 manifest against the real MinIO of e2e/cluster.sh (the
// S3_ENDPOINT_URL, AWS_* and MODELPLANE_S3_BUCKET variables), cross-checked with s5cmd.
// Virtual-hosted addressing is not tested here: MinIO answers it only with MINIO_DOMAIN set,
// which the test cluster does not set; the URL and Host construction has a unit test.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "core/digest/sha256.h"
#include "node-agent/manifest/manifest_builder.h"
#include "node-agent/sources/s3_client.h"
#include "node-agent/sources/s3_range_source.h"
#include "tests/node-agent/sources/test_files.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;
using testing::PatternBytes;
using testing::TempFolder;

std::string Env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): test set-up
  return value == nullptr ? std::string() : std::string(value);
}

int RunShell(const std::string& command, std::string* output = nullptr) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::string text;
  char buffer[4096];
  while (std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, got);
  const int status = ::pclose(pipe);
  if (output != nullptr) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class MinioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoint_ = Env("S3_ENDPOINT_URL");
    bucket_ = Env("MODELPLANE_S3_BUCKET");
    if (endpoint_.empty() || bucket_.empty() || Env("AWS_ACCESS_KEY_ID").empty()) {
      GTEST_SKIP() << "S3_ENDPOINT_URL, MODELPLANE_S3_BUCKET and AWS_* are not set: these tests "
                      "need MinIO from e2e/cluster.sh (scripts/test.sh starts it)";
    }
    client_ = MakeClient(Env("AWS_SECRET_ACCESS_KEY"));
    ASSERT_NE(client_, nullptr);
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    prefix_ = fmt::format("sources-test/{}-{}", ::getpid(), info->name());
  }

  std::unique_ptr<S3Client> MakeClient(const std::string& secret) const {
    S3ClientOptions options;
    options.endpoint = endpoint_;
    options.region = Env("AWS_REGION").empty() ? "us-east-1" : Env("AWS_REGION");
    options.credentials = {.access_key_id = Env("AWS_ACCESS_KEY_ID"), .secret_access_key = secret};
    options.http.retry.max_attempts = 1;
    auto client = S3Client::Create(options);
    EXPECT_TRUE(client.has_value()) << client.error().ToString();
    return client ? std::move(*client) : nullptr;
  }

  std::string Key(const std::string& name) const { return prefix_ + "/" + name; }

  static core::Status ReadInto(S3Client& client, const std::string& bucket, const std::string& key,
                               std::uint64_t offset, std::string& out) {
    return client.GetObjectRange(bucket, key, offset,
                                 {reinterpret_cast<std::byte*>(out.data()), out.size()}, {});
  }

  std::string S5cmd(const std::string& arguments, int* status = nullptr) const {
    std::string output;
    const int code =
        RunShell(fmt::format("s5cmd --endpoint-url {} {} 2>&1", endpoint_, arguments), &output);
    if (status != nullptr) *status = code;
    return output;
  }

  static bool HaveS5cmd() { return RunShell("command -v s5cmd >/dev/null 2>&1") == 0; }

  std::string endpoint_;
  std::string bucket_;
  std::string prefix_;
  std::unique_ptr<S3Client> client_;
};

TEST_F(MinioTest, PutHeadAndByteExactRangedReads) {
  const std::string content = PatternBytes(3 * 1024 * 1024 + 17);
  ASSERT_TRUE(client_->PutObject(bucket_, Key("model.safetensors"), content));
  auto size = client_->HeadObject(bucket_, Key("model.safetensors"));
  ASSERT_TRUE(size.has_value()) << size.error().ToString();
  EXPECT_EQ(*size, content.size());
  for (const auto& [offset, length] : {std::pair<std::size_t, std::size_t>{0, 1},
                                       {0, 1024 * 1024},
                                       {1024 * 1024, 1024 * 1024},
                                       {3 * 1024 * 1024, 17},
                                       {12'345, 678'901}}) {
    std::string out(length, '\0');
    auto status = ReadInto(*client_, bucket_, Key("model.safetensors"), offset, out);
    ASSERT_TRUE(status.has_value()) << status.error().ToString();
    EXPECT_EQ(out, content.substr(offset, length)) << offset << "+" << length;
  }
  // A range past the object's end is a short source.
  std::string past(100, '\0');
  auto short_read =
      ReadInto(*client_, bucket_, Key("model.safetensors"), content.size() - 10, past);
  ASSERT_FALSE(short_read.has_value());
  EXPECT_EQ(short_read.error().code(), ErrorCode::kDataLoss) << short_read.error().ToString();
}

TEST_F(MinioTest, RangeSourceReadsInParallel) {
  const std::string content = PatternBytes(2 * 1024 * 1024, 3);
  ASSERT_TRUE(client_->PutObject(bucket_, Key("r1/model.safetensors"), content));
  auto source =
      S3RangeSource::Create(std::shared_ptr<S3Client>(MakeClient(Env("AWS_SECRET_ACCESS_KEY"))),
                            {.name = "minio", .bucket = bucket_, .prefix = Key("r1/")});
  ASSERT_TRUE(source.has_value()) << source.error().ToString();
  EXPECT_EQ((*source)->name(), "objectStore/minio");
  std::string whole(content.size(), '\0');
  std::atomic<int> failures{0};
  {
    std::vector<std::jthread> threads;
    constexpr std::size_t kPiece = 256 * 1024;
    for (std::size_t offset = 0; offset < content.size(); offset += kPiece) {
      threads.emplace_back([&, offset] {
        auto status = (*source)->ReadRange(
            {.path = "model.safetensors"}, offset,
            {reinterpret_cast<std::byte*>(whole.data()) + offset, kPiece},
            {.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20)});
        if (!status) {
          ADD_FAILURE() << status.error().ToString();
          ++failures;
        }
      });
    }
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(whole, content);
}

TEST_F(MinioTest, KeysWithSpacesAndNonAsciiCharacters) {
  const std::vector<std::string> keys = {Key("dir with space/file name.bin"),
                                         Key("m\xC3\xBCller/\xE6\x9D\x83\xE9\x87\x8D+plus=eq.bin"),
                                         Key("odd!'()*,;@&$ chars.bin")};
  for (const std::string& key : keys) {
    const std::string content = "bytes of " + key;
    ASSERT_TRUE(client_->PutObject(bucket_, key, content)) << key;
    auto size = client_->HeadObject(bucket_, key);
    ASSERT_TRUE(size.has_value()) << key << ": " << size.error().ToString();
    EXPECT_EQ(*size, content.size());
    std::string out(content.size() - 3, '\0');
    auto status = ReadInto(*client_, bucket_, key, 3, out);
    ASSERT_TRUE(status.has_value()) << key << ": " << status.error().ToString();
    EXPECT_EQ(out, content.substr(3));
  }
  auto listed = client_->ListAllObjects(bucket_, prefix_ + "/");
  ASSERT_TRUE(listed.has_value()) << listed.error().ToString();
  std::vector<std::string> names;
  for (const auto& object : *listed) names.push_back(object.key);
  std::vector<std::string> expected = keys;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);
}

TEST_F(MinioTest, ListObjectsV2PagesWithContinuationTokens) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(
        client_->PutObject(bucket_, Key(fmt::format("page/obj-{}", i)), std::string(i, 'x')));
  }
  auto first = client_->ListObjectsV2(bucket_, Key("page/"), "", 3);
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  EXPECT_EQ(first->objects.size(), 3u);
  EXPECT_TRUE(first->truncated);
  EXPECT_FALSE(first->next_continuation_token.empty());
  auto all = client_->ListAllObjects(bucket_, Key("page/"), 2);
  ASSERT_TRUE(all.has_value()) << all.error().ToString();
  ASSERT_EQ(all->size(), 7u);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ((*all)[i].key, Key(fmt::format("page/obj-{}", i)));
    EXPECT_EQ((*all)[i].size, static_cast<std::uint64_t>(i));
  }
}

TEST_F(MinioTest, WrongSecretIsASignatureError) {
  ASSERT_TRUE(client_->PutObject(bucket_, Key("x"), "x"));
  auto wrong = MakeClient("not-the-secret");
  std::string out(1, '\0');
  auto status = ReadInto(*wrong, bucket_, Key("x"), 0, out);
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kUnauthenticated) << status.error().ToString();
  EXPECT_NE(status.error().message().find("SignatureDoesNotMatch"), std::string::npos)
      << status.error().message();
  auto list = wrong->ListObjectsV2(bucket_, prefix_, "", 10);
  ASSERT_FALSE(list.has_value());
  EXPECT_EQ(list.error().code(), ErrorCode::kUnauthenticated);
}

TEST_F(MinioTest, MissingKeyAndBucketAreNotFound) {
  std::string out(10, '\0');
  auto get = ReadInto(*client_, bucket_, Key("absent"), 0, out);
  ASSERT_FALSE(get.has_value());
  EXPECT_EQ(get.error().code(), ErrorCode::kNotFound) << get.error().ToString();
  EXPECT_NE(get.error().message().find("NoSuchKey"), std::string::npos) << get.error().message();
  auto head = client_->HeadObject(bucket_, Key("absent"));
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.error().code(), ErrorCode::kNotFound);
  auto bucket = ReadInto(*client_, "no-such-bucket-modelplane", "k", 0, out);
  ASSERT_FALSE(bucket.has_value());
  EXPECT_EQ(bucket.error().code(), ErrorCode::kNotFound) << bucket.error().ToString();
}

TEST_F(MinioTest, S5cmdReadsWhatWePutAndWeReadWhatItPuts) {
  if (!HaveS5cmd()) GTEST_SKIP() << "s5cmd is not on PATH (eval \"$(e2e/cluster.sh env)\")";
  const std::string ours = "written by S3Client \xE2\x9C\x93";
  ASSERT_TRUE(client_->PutObject(bucket_, Key("ours file.txt"), ours));
  int status = 0;
  const std::string cat =
      S5cmd(fmt::format("cat 's3://{}/{}'", bucket_, Key("ours file.txt")), &status);
  EXPECT_EQ(status, 0) << cat;
  EXPECT_EQ(cat, ours);

  TempFolder folder;
  const std::string theirs = PatternBytes(200'000, 11);
  const std::string local = folder.Write("theirs.bin", theirs);
  const std::string copied = S5cmd(
      fmt::format("cp '{}' 's3://{}/{}'", local, bucket_, Key("their f\xC3\xBCle.bin")), &status);
  ASSERT_EQ(status, 0) << copied;
  std::string out(theirs.size() - 1000, '\0');
  auto read = ReadInto(*client_, bucket_, Key("their f\xC3\xBCle.bin"), 1000, out);
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(out, theirs.substr(1000));
}

TEST_F(MinioTest, ManifestFromPrefixEqualsManifestFromFolder) {
  TempFolder folder;
  const std::string checkpoint = folder.path() + "/ckpt";
  ASSERT_EQ(RunShell(fmt::format("python3 {}/e2e/checkpoint/generate.py --out {} --size 2MiB "
                                 "--shards 2 --seed 9 >/dev/null",
                                 MODELPLANE_SOURCE_DIR, checkpoint)),
            0);
  folder.Write("ckpt/README.md", "skipped in both");
  for (const auto& entry : std::filesystem::directory_iterator(checkpoint)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    ASSERT_TRUE(
        client_->PutObject(bucket_, Key("ckpt/" + entry.path().filename().string()), bytes.str()));
  }
  auto from_folder = ListFolderFiles(checkpoint, {.threads = 2});
  ASSERT_TRUE(from_folder.has_value()) << from_folder.error().ToString();
  auto from_s3 = ListS3Files(*client_, bucket_, Key("ckpt"), {.threads = 3});
  ASSERT_TRUE(from_s3.has_value()) << from_s3.error().ToString();
  EXPECT_EQ(from_s3->files, from_folder->files);
  EXPECT_EQ(from_s3->skipped, from_folder->skipped);
  EXPECT_EQ(from_s3->files.size(), 5u);
}

}  // namespace
}  // namespace modelplane::agent
