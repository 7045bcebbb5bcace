// Shared by the extender's cluster tests: the real modelplane-scheduler-extender binary started
// against the local control plane (e2e/cluster.sh), with an inventory that says gpu-node-2
// holds a ModelRevision Ready and gpu-node-1 cannot fit it, plain HTTP or mutual TLS with a
// throwaway PKI (tests/core/http/test_certificates.h), and its memory read from /proc.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/http/http_client.h"
#include "core/kube/resource_type.h"
#include "tests/core/http/test_certificates.h"
#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/support/child_process.h"

namespace modelplane::extender::testing {

using core::testing::RunCommand;
using core::testing::WaitUntil;
using ::modelplane::testing::ChildProcess;
using nlohmann::json;
using std::chrono::seconds;

inline constexpr std::int64_t kGiB = std::int64_t{1} << 30;
inline constexpr const char* kDigest =
    "sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
inline constexpr const char* kHolder = "gpu-node-2";    // holds the revision Ready
inline constexpr const char* kTooSmall = "gpu-node-1";  // its cache cannot fit the revision
// The CN of the client certificate kube-scheduler presents, and the one the extender allows.
inline constexpr const char* kSchedulerName = "modelplane-scheduler";

// A loopback port free right now (the kernel's pick, released again).
inline std::uint16_t FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    address.sin_port = 0;
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

inline json Revision(const std::string& ns) {
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelRevision"},
          {"metadata", {{"name", "llama-r1"}, {"namespace", ns}}},
          {"spec",
           {{"modelName", "llama"},
            {"format", "safetensors"},
            {"files",
             {{{"path", "model.safetensors"},
               {"size", 40 * kGiB},
               {"sha256", "sha256:" + std::string(64, '1')},
               {"role", "weights"}}}},
            {"engine", {{"name", "vllm"}, {"version", "0.6.3"}}},
            {"sources",
             {{{"name", "s3"},
               {"type", "objectStore"},
               {"objectStore", {{"endpoint", "http://127.0.0.1:9000"}, {"bucket", "models"}}}}}}}}};
}

inline json CacheStatus(std::int64_t capacity, std::int64_t used, bool holds) {
  json status = {{"capacityBytes", capacity}, {"usedBytes", used}, {"reservedBytes", 0}};
  if (holds) {
    status["revisions"] = {{{"digest", kDigest},
                            {"state", "Ready"},
                            {"bytesDone", 40 * kGiB},
                            {"bytesTotal", 40 * kGiB}}};
  }
  return status;
}

// VmHWM (peak resident memory) and VmRSS of a process, in KiB, from /proc/<pid>/status.
struct ProcessMemory {
  std::int64_t peak_kib = -1;
  std::int64_t resident_kib = -1;
};

inline ProcessMemory ReadProcessMemory(pid_t pid) {
  ProcessMemory memory;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    std::istringstream fields(line);
    std::string key;
    std::int64_t kib = 0;
    fields >> key >> kib;
    if (key == "VmHWM:") memory.peak_kib = kib;
    if (key == "VmRSS:") memory.resident_kib = kib;
  }
  return memory;
}

// How the extender binary is started.
struct ExtenderLaunch {
  std::uint16_t port = 0;  // 0: a free one
  std::string path_prefix = "/scheduler";
  bool mutual_tls = false;  // HTTPS, client certificates from the test CA with CN kSchedulerName
  std::vector<std::string> server_lines;  // more `server:` keys, e.g. "maxConcurrentBodies: 2"
};

class ExtenderClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    work_ = std::filesystem::temp_directory_path() / ("mp-extender-" + namespace_);
    std::filesystem::create_directories(work_);
    // CRDs: scripts/test.sh applies them; apply again so the test also runs on a bare cluster.
    std::string output;
    ASSERT_EQ(RunCommand("kubectl --kubeconfig=" + kubeconfig_path_ +
                             " apply --server-side --force-conflicts -f " +
                             std::string(MODELPLANE_SOURCE_DIR) + "/crds/ 2>&1",
                         &output),
              0)
        << output;
    RunCommand("kubectl --kubeconfig=" + kubeconfig_path_ +
               " wait --for=condition=Established --timeout=30s crd/modelrevisions.modelplane.io"
               " crd/modelcaches.modelplane.io 2>&1");
    CreateInventory();
  }

  void TearDown() override {
    extender_.Stop();
    if (client_) {
      for (const std::string& node : created_caches_) {
        (void)client_->Delete(core::resources::ModelCaches(), "", node);
      }
    }
    ClusterTest::TearDown();
    if (!HasFailure() && !work_.empty()) std::filesystem::remove_all(work_);
  }

  void CreateInventory() {
    auto revision =
        client_->Create(core::resources::ModelRevisions(), namespace_, Revision(namespace_));
    ASSERT_TRUE(revision) << revision.error().ToString();
    (*revision)["status"] = {{"digest", kDigest}, {"totalBytes", 40 * kGiB}};
    auto with_status = client_->UpdateStatus(core::resources::ModelRevisions(), *revision);
    ASSERT_TRUE(with_status) << with_status.error().ToString();

    // gpu-node-2 holds it; gpu-node-1 has 10 GiB free of 100; the others have no ModelCache.
    const std::vector<std::pair<std::string, json>> caches = {
        {kHolder, CacheStatus(1000 * kGiB, 100 * kGiB, true)},
        {kTooSmall, CacheStatus(100 * kGiB, 90 * kGiB, false)}};
    for (const auto& [node, status] : caches) {
      (void)client_->Delete(core::resources::ModelCaches(), "", node);
      ASSERT_TRUE(WaitUntil(
          [&] { return !client_->Get(core::resources::ModelCaches(), "", node).has_value(); },
          seconds(30)));
      auto cache = client_->Create(core::resources::ModelCaches(), "",
                                   {{"apiVersion", "modelplane.io/v1alpha1"},
                                    {"kind", "ModelCache"},
                                    {"metadata", {{"name", node}}},
                                    {"spec", json::object()}});
      ASSERT_TRUE(cache) << cache.error().ToString();
      created_caches_.push_back(node);
      (*cache)["status"] = status;
      auto updated = client_->UpdateStatus(core::resources::ModelCaches(), *cache);
      ASSERT_TRUE(updated) << updated.error().ToString();
    }
  }

  // Starts the extender binary and waits until it is ready (both informers listed, so the
  // inventory above is in it).
  void StartExtender(const ExtenderLaunch& launch = {}) {
    extender_port_ = launch.port != 0 ? launch.port : FreePort();
    admin_port_ = FreePort();
    mutual_tls_ = launch.mutual_tls;
    std::ostringstream server;
    server << "server:\n"
           << "  address: 127.0.0.1\n"
           << "  port: " << extender_port_ << "\n"
           << "  pathPrefix: '" << launch.path_prefix << "'\n";
    for (const std::string& line : launch.server_lines) server << "  " << line << "\n";
    if (launch.mutual_tls) {
      auto pki = core::testing::MakeTestPki((work_ / "pki").string(), kSchedulerName);
      ASSERT_TRUE(pki) << pki.error().ToString();
      pki_ = *pki;
      server << "  tls:\n"
             << "    certFile: " << pki_.server_certificate_file << "\n"
             << "    keyFile: " << pki_.server_key_file << "\n"
             << "    clientCAFile: " << pki_.ca_file << "\n"
             << "    clientNames: [" << kSchedulerName << "]\n";
    }
    const std::string config = (work_ / "extender.yaml").string();
    std::ofstream(config) << server.str() << "admin: {address: 127.0.0.1, port: " << admin_port_
                          << "}\n"
                          << "kubernetes: {kubeconfig: " << kubeconfig_path_ << "}\n";
    auto extender = ChildProcess::Start(
        {std::string(MODELPLANE_BINARY_DIR) + "/scheduler-extender/modelplane-scheduler-extender",
         "--config", config},
        {.log_path = (work_ / "extender.log").string()});
    ASSERT_TRUE(extender) << extender.error().ToString();
    extender_ = std::move(*extender);
    core::ClientOptions options;
    options.retry.max_attempts = 1;
    if (launch.mutual_tls) {
      options.tls = core::TlsClientOptions{.ca_file = pki_.ca_file,
                                           .certificate_chain_file = pki_.client_certificate_file,
                                           .private_key_file = pki_.client_key_file};
    }
    auto client = core::HttpClient::Create(options);
    ASSERT_TRUE(client);
    http_ = std::move(*client);
    ASSERT_TRUE(WaitUntil(
        [&] {
          return extender_.Running() && http_->Fetch({.url = AdminUrl("/readyz")}).has_value();
        },
        seconds(30)))
        << extender_.Log();
  }

  std::string AdminUrl(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(admin_port_) + path;
  }
  // Where kube-scheduler's urlPrefix points.
  std::string UrlPrefix() const {
    return std::string(mutual_tls_ ? "https" : "http") +
           "://127.0.0.1:" + std::to_string(extender_port_) + "/scheduler";
  }

  std::filesystem::path work_;
  std::vector<std::string> created_caches_;
  std::uint16_t extender_port_ = 0;
  std::uint16_t admin_port_ = 0;
  bool mutual_tls_ = false;
  core::testing::TestPki pki_;
  ChildProcess extender_;
  std::unique_ptr<core::HttpClient> http_;
};

}  // namespace modelplane::extender::testing
