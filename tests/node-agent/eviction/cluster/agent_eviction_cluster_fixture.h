// The fixture of agent_eviction_cluster_test.cc: a real `modelplane-node-agent run` process
// on a 200 MiB tmpfs cache root the fixture mounts, against the local control plane, with
// helpers to stage revisions, write the node's ModelCache spec and read its status.
#pragma once

#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include <fmt/format.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/object_key.h"
#include "core/http/http_client.h"
#include "node-agent/revision/loaded_revision.h"
#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/node-agent/csi/staged_revision.h"
#include "tests/node-agent/node_agent_process.h"
#include "tests/support/child_process.h"

namespace modelplane::agent::testing {

using core::testing::WaitUntil;
using ::modelplane::testing::ChildProcess;
using nlohmann::json;

inline constexpr auto kWait = std::chrono::seconds(60);
inline constexpr std::uint64_t kMiB = 1024 * 1024;
inline constexpr std::uint64_t kFilesystemBytes = 200 * kMiB;

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct TestRevision {
  std::string name;
  std::uint64_t bytes = 0;
  std::map<std::string, std::string> files;
  core::Sha256Bytes digest{};
};

class AgentEvictionClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (::geteuid() != 0) GTEST_SKIP() << "mounting the test's tmpfs needs root";
    if (!ModelplaneCrdsInstalled()) GTEST_SKIP() << core::testing::kModelplaneCrdsMissing;
    node_ = namespace_;
    base_ = std::filesystem::path("/tmp") / (namespace_ + "-evict");
    std::filesystem::create_directories(base_ / "cache");
    const std::string options = "size=" + std::to_string(kFilesystemBytes);
    ASSERT_EQ(::mount("tmpfs", (base_ / "cache").c_str(), "tmpfs", 0, options.c_str()), 0)
        << std::system_category().message(errno);
    mounted_ = true;
    auto node =
        client_->Create(core::resources::Nodes(), "",
                        {{"apiVersion", "v1"},
                         {"kind", "Node"},
                         {"metadata", {{"name", node_}, {"labels", {{"type", "eviction-test"}}}}}});
    ASSERT_TRUE(node) << node.error().ToString();
  }

  void TearDown() override {
    StopAgent();
    if (mounted_) ::umount2((base_ / "cache").c_str(), MNT_DETACH);
    if (!base_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(base_, ignored);
    }
    if (client_ && !node_.empty()) {
      (void)client_->Delete(core::resources::Nodes(), "", node_);
      (void)client_->Delete(core::resources::ModelCaches(), "", node_);
    }
    ClusterTest::TearDown();
  }

  // Creates the ModelRevision (`file_count` weights files of `bytes` in all, content distinct
  // per revision and file) and computes its digest as the agent will.
  // `sources`: the revision's spec.sources; null: the object store the policy allows.
  TestRevision MakeRevision(const std::string& name, std::uint64_t bytes, int file_count = 1,
                            const json& sources = nullptr) {
    TestRevision revision{.name = name, .bytes = bytes};
    for (int index = 0; index < file_count; ++index) {
      std::string content(bytes / file_count, static_cast<char>('a' + name.back() % 26));
      const std::string label = name + "/" + std::to_string(index);
      std::memcpy(content.data(), label.data(), label.size());
      revision.files[fmt::format("model-{:05}.safetensors", index)] = std::move(content);
    }
    json spec_files = json::array();
    for (const auto& [path, data] : revision.files) {
      spec_files.push_back({{"path", path},
                            {"size", data.size()},
                            {"sha256", core::FormatDigest(core::Sha256Of(data))},
                            {"role", "weights"}});
    }
    const json object = {
        {"apiVersion", "modelplane.io/v1alpha1"},
        {"kind", "ModelRevision"},
        {"metadata", {{"name", name}, {"namespace", namespace_}}},
        {"spec",
         {{"files", spec_files},
          {"format", "safetensors"},
          {"engine", {{"name", "vllm"}, {"version", "0.6.0"}}},
          {"sources",
           sources.is_null()
               ? json::array({{{"name", "s3"},
                               {"type", "objectStore"},
                               {"objectStore", {{"bucket", "models"}, {"prefix", name}}}}})
               : sources}}}};
    auto created = client_->Create(core::resources::ModelRevisions(), namespace_, object);
    EXPECT_TRUE(created) << created.error().ToString();
    if (!created) return revision;
    auto parsed = core::api::ModelRevisionFromJson(*created);
    EXPECT_TRUE(parsed) << parsed.error().ToString();
    if (!parsed) return revision;
    auto loaded = CheckRevision(std::move(*parsed));
    EXPECT_TRUE(loaded) << loaded.error().ToString();
    if (loaded) revision.digest = loaded->digest;
    return revision;
  }

  void StageAll(const std::vector<const TestRevision*>& revisions) {
    auto store = CacheStore::Open({.root = base_ / "cache", .headroom_bytes = 0});
    ASSERT_TRUE(store) << store.error().ToString();
    for (const TestRevision* revision : revisions) {
      const std::string key = core::api::ObjectKey(namespace_, revision->name);
      auto staged = StageRevision(**store, revision->files, revision->digest, key);
      ASSERT_TRUE(staged) << staged.error().ToString();
      auto recorded = RecordStagedFromOwnSources(**store, revision->digest, key);
      ASSERT_TRUE(recorded) << recorded.error().ToString();
    }
  }

  json Entry(const TestRevision& revision, bool pinned, std::string_view reason) const {
    json entry = {{"revision", {{"namespace", namespace_}, {"name", revision.name}}},
                  {"digest", core::FormatDigest(revision.digest)},
                  {"pinned", pinned},
                  {"reason", reason}};
    if (pinned) {
      entry["pinnedUntil"] =
          core::api::FormatTimestamp(std::chrono::time_point_cast<std::chrono::microseconds>(
              std::chrono::system_clock::now() + std::chrono::hours(1)));
    }
    return entry;
  }

  // A ModelCache named `name` whose spec lists `entries` (see Entry).
  void CreateCache(const std::string& name, json entries) {
    auto cache = client_->Create(core::resources::ModelCaches(), "",
                                 {{"apiVersion", "modelplane.io/v1alpha1"},
                                  {"kind", "ModelCache"},
                                  {"metadata", {{"name", name}}},
                                  {"spec", {{"revisions", std::move(entries)}}}});
    ASSERT_TRUE(cache) << cache.error().ToString();
  }

  void CreatePod(const std::string& name, const std::string& revision) {
    const json pod = {{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata",
                       {{"name", name},
                        {"namespace", namespace_},
                        {"annotations", {{"modelplane.io/revision", revision}}}}},
                      {"spec",
                       {{"nodeName", node_},
                        {"automountServiceAccountToken", false},
                        {"containers", {{{"name", "server"}, {"image", "example.com/vllm:1"}}}}}}};
    // The namespace's default ServiceAccount may not exist yet; admission needs it.
    core::Result<json> created = std::unexpected(core::Error(core::ErrorCode::kInternal, ""));
    ASSERT_TRUE(WaitUntil(
        [&] {
          created = client_->Create(core::resources::Pods(), namespace_, pod);
          return created.has_value();
        },
        kWait))
        << created.error().ToString();
  }

  // `delete_rate`: the evictor's pacing in bytes per second, 0 for none.
  void StartAgent(std::uint64_t delete_rate = 0, int high_percent = 80,
                  std::string_view retention_interval = "500ms") {
    config_ = (base_ / "agent.yaml").string();
    std::ofstream(config_) << "nodeName: " << node_ << "\n"
                           << "cacheRoot: " << (base_ / "cache").string() << "\n"
                           << "admin: {address: 127.0.0.1, port: 0}\n"
                           << "kubernetes: {kubeconfig: " << kubeconfig_path_ << "}\n"
                           << "peers: {enabled: false}\n"
                           << "sourcePolicy: " << source_policy_ << "\n"
                           << "statusInterval: 200ms\n"
                           << "eviction: {highPercent: " << high_percent << ", lowPercent: 70, "
                           << "kubeletFilesystem: separate, interval: " << retention_interval
                           << ", "
                           << "deleteRate: " << delete_rate << "}\n"
                           << extra_config_;
    auto agent =
        ::modelplane::testing::StartNodeAgentProcess(config_, (base_ / "agent.log").string());
    ASSERT_TRUE(agent) << agent.error().ToString();
    agent_ = std::move(*agent);
  }

  // SIGKILL: no shutdown path runs, as when the node or the container dies.
  void KillAgent() {
    ASSERT_TRUE(agent_.has_process());
    ASSERT_NE(agent_.Stop(SIGKILL).signal, 0) << Log();
  }

  std::size_t Count(std::string_view needle) const {
    const std::string log = Log();
    std::size_t count = 0;
    for (auto at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) {
      ++count;
    }
    return count;
  }

  // Every revision the store lists has every blob it names.
  static void ExpectConsistent(const CacheStore& store) {
    for (const RevisionManifest& manifest : store.ListRevisions()) {
      for (const ManifestFile& file : manifest.files) {
        EXPECT_TRUE(store.HasBlob(file.sha256)) << manifest.name << " " << file.path;
      }
    }
  }

  void StopAgent() {
    if (!agent_.has_process()) return;
    EXPECT_EQ(agent_.Stop().code, 0) << Log();
  }

  std::string Log() const { return ReadFile(base_ / "agent.log"); }

  // Passes of the agent's loop so far, from its own /metrics (the admin port is in its log).
  std::optional<double> Reconciles() {
    const auto port = core::testing::LoggedPort(Log(), "admin_server_started");
    if (!port) return std::nullopt;
    core::ClientOptions options;
    options.retry.max_attempts = 1;
    auto http = core::HttpClient::Create(options);
    if (!http) return std::nullopt;
    auto response = (*http)->Fetch({.url = fmt::format("http://127.0.0.1:{}/metrics", *port)});
    if (!response || response->status != 200) return std::nullopt;
    double total = 0;
    std::istringstream lines(response->body);
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("modelplane_agent_reconcile_total{")) {
        total += std::atof(line.c_str() + line.rfind(' ') + 1);
      }
    }
    return total;
  }

  std::optional<core::api::ModelCacheStatus> Status() {
    auto object = client_->Get(core::resources::ModelCaches(), "", node_);
    if (!object) return std::nullopt;
    auto cache = core::api::ModelCacheFromJson(*object);
    if (!cache) return std::nullopt;
    return cache->status;
  }

  static const core::api::CachedRevision* Find(const core::api::ModelCacheStatus& status,
                                               const TestRevision& revision) {
    const std::string digest = core::FormatDigest(revision.digest);
    for (const auto& entry : status.revisions) {
      if (entry.digest == digest) return &entry;
    }
    return nullptr;
  }

  static bool Has(const std::vector<std::string>& classes, std::string_view name) {
    return std::ranges::find(classes, name) != classes.end();
  }

  std::string node_;
  std::filesystem::path base_;
  bool mounted_ = false;
  std::string config_;
  std::string source_policy_ = "{objectStores: [{buckets: [models], nodeCredentials: true}]}";
  std::string extra_config_;  // more top-level keys of the agent's config, whole lines
  ChildProcess agent_;
};

}  // namespace modelplane::agent::testing
