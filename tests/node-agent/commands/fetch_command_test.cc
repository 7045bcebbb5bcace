// The `fetch`, `verify` and `gc` commands as a user runs them: the real binary in a child
// process, a real HTTP origin (core's server) on loopback, real files. Includes `kill -9` in the
// middle of a fetch and the restart that must finish it without downloading again what landed.
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/digest/sha256.h"
#include "core/http/http_server.h"
#include "core/io/unique_fd.h"
#include "tests/support/child_process.h"

namespace modelplane::agent {
namespace {

// NOLINTNEXTLINE(cert-err58-cpp): a test constant; a throw before main ends the test anyway
const std::string kBinary =
    std::string(MODELPLANE_BINARY_DIR) + "/node-agent/modelplane-node-agent";

using ::modelplane::testing::ChildProcess;
using ::modelplane::testing::ExitStatus;

struct ProcessResult {
  int exit_code = -1;  // minus the signal when one ended it
  std::string out;
};

// Starts the binary with its stdout (its JSON report) in a file; its log stays on stderr.
ChildProcess Spawn(std::vector<std::string> args, const std::filesystem::path& stdout_path) {
  args.insert(args.begin(), kBinary);
  auto child =
      ChildProcess::Start(args, {.log_path = stdout_path.string(), .log_stdout_only = true});
  EXPECT_TRUE(child) << child.error().ToString();
  return child ? std::move(*child) : ChildProcess();
}

ProcessResult Outcome(const ChildProcess& child, const ExitStatus& status) {
  return {.exit_code = status.signal != 0 ? -status.signal : status.code, .out = child.Log()};
}

// An answer that sends its first 16 KiB and then stalls for 3 s before each further piece:
// bytes move, but no range ever lands within a short range timeout.
class Trickle final : public core::BodySource {
 public:
  explicit Trickle(std::unique_ptr<core::BodySource> inner) : inner_(std::move(inner)) {}
  [[nodiscard]] std::uint64_t Size() const override { return inner_->Size(); }
  [[nodiscard]] core::Result<std::size_t> ReadAt(std::uint64_t offset,
                                                 std::span<std::byte> out) override {
    if (sent_ >= kBeforeStall) std::this_thread::sleep_for(std::chrono::seconds(3));
    auto read = inner_->ReadAt(offset, out.first(std::min<std::size_t>(out.size(), kBeforeStall)));
    if (read) sent_ += *read;
    return read;
  }

 private:
  static constexpr std::size_t kBeforeStall = 16 << 10;
  std::unique_ptr<core::BodySource> inner_;
  std::uint64_t sent_ = 0;
};

class FetchCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() /
            fmt::format("fetch-command-test-{}-{}", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(base_);
    std::filesystem::create_directories(base_ / "origin" / "sub dir");
    AddFile("model-00001-of-00002.safetensors", (6 << 20) + 333, 11);
    AddFile("model-00002-of-00002.safetensors", (3 << 20) + 5, 12);
    AddFile("sub dir/config.json", 1234, 13);

    core::Router router;
    router.HandlePrefix(boost::beast::http::verb::get, "/models/",
                        [this](const core::ServerRequest& request) {
                          const int count = ++requests_;
                          if (fail_every_other_ && count % 2 == 0) {
                            return core::ServerResponse::Text(
                                boost::beast::http::status::internal_server_error, "oops\n");
                          }
                          if (delay_ms_ > 0) {
                            std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
                          }
                          return Serve(request);
                        });
    auto server = core::HttpServer::Create({.threads = 4}, std::move(router));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(base_);
  }

  core::ServerResponse Serve(const core::ServerRequest& request) {
    std::string path = request.path;
    path = path.substr(std::string_view("/models/").size());
    // Percent-decoding is all this origin needs ("sub%20dir").
    std::string decoded;
    for (std::size_t i = 0; i < path.size(); ++i) {
      if (path[i] == '%' && i + 2 < path.size()) {
        decoded += static_cast<char>(std::stoi(path.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        decoded += path[i];
      }
    }
    auto file = core::FileBodySource::Open((base_ / "origin" / decoded).string());
    if (!file) return core::ServerResponse::Text(boost::beast::http::status::not_found, "no\n");
    if (trickle_) return core::ServerResponse::Stream(std::make_unique<Trickle>(std::move(*file)));
    return core::ServerResponse::Stream(std::move(*file));
  }

  void AddFile(const std::string& path, std::size_t size, unsigned seed) {
    std::mt19937 random(seed);
    std::string content(size, '\0');
    for (char& c : content) c = static_cast<char>(random());
    std::ofstream(base_ / "origin" / path, std::ios::binary) << content;
    files_.push_back({path, size, core::FormatDigest(core::Sha256Of(content))});
    total_ += size;
  }

  std::filesystem::path WriteRevision() {
    std::string yaml = fmt::format(R"(apiVersion: modelplane.io/v1alpha1
kind: ModelRevision
metadata:
  name: test-model
  namespace: default
spec:
  modelName: test
  format: safetensors
  engine:
    name: vllm
    version: 0.6.3
  files:
)");
    for (const auto& [path, size, sha] : files_) {
      const bool weights = path.ends_with(".safetensors");
      yaml += fmt::format("    - path: \"{}\"\n      size: {}\n      sha256: {}\n      role: {}\n",
                          path, size, sha, weights ? "weights" : "config");
    }
    yaml += fmt::format(R"(  sources:
    - name: origin
      type: http
      http:
        baseURL: http://127.0.0.1:{}/models
)",
                        server_->port());
    auto path = base_ / "revision.yaml";
    std::ofstream(path) << yaml;
    return path;
  }

  std::vector<std::string> FetchArgs() {
    return {"fetch",
            "--revision",
            WriteRevision().string(),
            "--cache-root",
            (base_ / "cache").string(),
            "--range-size",
            "64Ki",
            "--in-flight",
            "2"};
  }

  ProcessResult Run(const std::vector<std::string>& args) {
    ChildProcess child = Spawn(args, base_ / "stdout.json");
    return Outcome(child, child.Wait());
  }

  // Bytes that the progress records on disk say have landed (their format: partial_blob.h).
  std::uint64_t RecordedBytes() {
    std::uint64_t bytes = 0;
    for (const auto& entry : std::filesystem::directory_iterator(base_ / "cache" / "tmp")) {
      if (entry.path().extension() != ".progress") continue;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::string record((std::istreambuf_iterator<char>(in)), {});
      if (record.size() < 32) continue;
      std::uint64_t size = 0;
      std::uint64_t range = 0;
      std::memcpy(&size, record.data() + 8, 8);
      std::memcpy(&range, record.data() + 16, 8);
      for (std::size_t i = 32; i < record.size(); ++i) {
        const std::uint64_t offset = (i - 32) * range;
        if (record[i] == 1) bytes += std::min(range, size - offset);
      }
    }
    return bytes;
  }

  std::filesystem::path base_;
  std::unique_ptr<core::HttpServer> server_;
  std::atomic<int> requests_{0};
  std::atomic<int> delay_ms_{0};
  std::atomic<bool> fail_every_other_{false};  // every second request answers 500
  std::atomic<bool> trickle_{false};           // 16 KiB of each answer, then a long stall
  std::vector<std::tuple<std::string, std::size_t, std::string>> files_;
  std::uint64_t total_ = 0;
};

TEST_F(FetchCommandTest, FetchesFromAnHttpOriginByteExact) {
  auto result = Run(FetchArgs());
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto report = nlohmann::json::parse(result.out);
  EXPECT_TRUE(report["ready"].get<bool>());
  EXPECT_EQ(report["fetchedBytes"].get<std::uint64_t>(), total_);
  EXPECT_EQ(report["tier"], "http");
  for (const auto& [path, size, sha] : files_) {
    const auto blob = base_ / "cache" / "blobs" / "sha256" / sha.substr(7);
    EXPECT_EQ(core::FormatDigest(*core::Sha256OfFile(blob.string())), sha) << path;
  }
  auto verify = Run({"verify", "--cache-root", (base_ / "cache").string()});
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
  EXPECT_EQ(nlohmann::json::parse(verify.out)["verifiedBlobs"], files_.size());

  auto again = Run(FetchArgs());
  ASSERT_EQ(again.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(again.out)["tier"], "local");
}

// A sole origin answering 500 to every other request: each 500 is retried from the source's
// retry quota, which the successes in between refill, so the fetch completes.
TEST_F(FetchCommandTest, AFlakySoleOriginAnswering500ToEveryOtherRequestCompletes) {
  fail_every_other_ = true;
  auto result = Run(FetchArgs());
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_TRUE(nlohmann::json::parse(result.out)["ready"].get<bool>());
  EXPECT_GT(requests_.load(), 2 * static_cast<int>((total_ + (64 << 10) - 1) / (64 << 10)) - 8)
      << "about half the requests failed and were retried";
}

// A sole origin that sends the start of each answer and stalls: under a goodput floor the
// command gives up within about the window, saying how fast it went and why.
TEST_F(FetchCommandTest, ATricklingSoleOriginUnderAGoodputFloorGivesUpSayingWhy) {
  trickle_ = true;
  auto args = FetchArgs();
  for (const char* flag :
       {"--range-timeout", "1s", "--min-goodput", "1Mi", "--goodput-window", "4s"}) {
    args.emplace_back(flag);
  }
  const auto started = std::chrono::steady_clock::now();
  auto result = Run(args);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_NE(result.exit_code, 0) << result.out;
  const auto report = nlohmann::json::parse(result.out);
  EXPECT_FALSE(report["ready"].get<bool>());
  const std::string why = report["error"].get<std::string>();
  EXPECT_NE(why.find("slower than the floor of 1048576 B/s"), std::string::npos) << why;
  EXPECT_NE(why.find("over the last 4 s"), std::string::npos) << why;
  EXPECT_LT(took, std::chrono::seconds(60)) << "gave up long after the window";
}

TEST_F(FetchCommandTest, KillNineMidFetchThenRestartDownloadsOnlyWhatWasInFlight) {
  delay_ms_ = 4;  // about 150 ranges of 64 KiB: a few seconds to kill in
  const auto out = base_ / "killed.json";
  ChildProcess child = Spawn(FetchArgs(), out);
  ASSERT_TRUE(child.has_process());
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    std::error_code error;
    if (std::filesystem::exists(base_ / "cache" / "tmp", error) && RecordedBytes() >= total_ / 3) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto killed = Outcome(child, child.Stop(SIGKILL));
  ASSERT_EQ(killed.exit_code, -SIGKILL);
  const std::uint64_t landed = RecordedBytes();
  ASSERT_GT(landed, 0u);
  ASSERT_LT(landed, total_);
  // Files fetch side by side, so a small one may be published before the kill.
  std::uint64_t published = 0;
  for (const auto& blob :
       std::filesystem::directory_iterator(base_ / "cache" / "blobs" / "sha256")) {
    published += blob.file_size();
  }

  delay_ms_ = 0;
  auto resumed = Run(FetchArgs());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const auto report = nlohmann::json::parse(resumed.out);
  EXPECT_TRUE(report["ready"].get<bool>());
  // Every range recorded before the kill is reused, and every published file; only the rest
  // comes over the network.
  EXPECT_EQ(report["resumedBytes"].get<std::uint64_t>(), landed);
  EXPECT_EQ(report["localBytes"].get<std::uint64_t>(), published);
  EXPECT_EQ(report["fetchedBytes"].get<std::uint64_t>(), total_ - landed - published);
  auto verify = Run({"verify", "--cache-root", (base_ / "cache").string()});
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
}

TEST_F(FetchCommandTest, MissingFileAtTheOriginFailsWithAClearErrorAndPublishesNothing) {
  std::filesystem::remove(base_ / "origin" / "sub dir" / "config.json");
  auto result = Run(FetchArgs());
  EXPECT_EQ(result.exit_code, 1);
  const auto report = nlohmann::json::parse(result.out);
  EXPECT_FALSE(report["ready"].get<bool>());
  EXPECT_NE(report["error"].get<std::string>().find("sub dir/config.json"), std::string::npos)
      << report.dump(2);
  EXPECT_TRUE(std::filesystem::is_empty(base_ / "cache" / "revisions" / "sha256"));
}

TEST_F(FetchCommandTest, InvalidManifestIsAUsageError) {
  std::ofstream(base_ / "bad.yaml")
      << "apiVersion: modelplane.io/v1alpha1\nkind: ModelRevision\n"
         "metadata: {name: x, namespace: d}\nspec:\n  files:\n"
         "    - {path: ../escape, size: 1, sha256: sha256:00, role: weights}\n";
  auto result = Run({"fetch", "--revision", (base_ / "bad.yaml").string(), "--cache-root",
                     (base_ / "cache").string()});
  EXPECT_EQ(result.exit_code, 2);
}

TEST_F(FetchCommandTest, GcRemovesWhatNoRevisionNames) {
  ASSERT_EQ(Run(FetchArgs()).exit_code, 0);
  const auto fetched = nlohmann::json::parse(Run(FetchArgs()).out);
  auto kept = Run({"gc", "--cache-root", (base_ / "cache").string()});
  ASSERT_EQ(kept.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(kept.out)["blobsRemoved"], 0);
  auto removed = Run({"gc", "--cache-root", (base_ / "cache").string(), "--remove-revision",
                      fetched["revisionDigest"].get<std::string>()});
  ASSERT_EQ(removed.exit_code, 0) << removed.out;
  EXPECT_EQ(nlohmann::json::parse(removed.out)["blobsRemoved"], files_.size());
  EXPECT_EQ(nlohmann::json::parse(removed.out)["usedBytes"], 0);
}

}  // namespace
}  // namespace modelplane::agent
