// Shared set-up for tests that run against the real local control plane (e2e/cluster.sh).
//
// scripts/test.sh starts a cluster and passes MODELPLANE_TEST_KUBECONFIG and
// MODELPLANE_TEST_CLUSTER (the cluster script, for restarting kube-apiserver and running
// etcdctl). Each test gets its own namespace, deleted afterwards.
#pragma once

#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/clock/clock.h"
#include "core/kube/kube_client.h"
#include "core/kube/resource_type.h"
#include "core/kube/watch_stream.h"

namespace modelplane::core::testing {

inline std::string EnvOr(const char* name, const std::string& fallback = "") {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): test set-up
  return value == nullptr ? fallback : std::string(value);
}

// Runs a shell command, returns its exit status and stdout.
inline int RunCommand(const std::string& command, std::string* output = nullptr) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  std::string text;
  while (std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, got);
  const int status = ::pclose(pipe);
  if (output != nullptr) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Polls until the predicate holds or the timeout passes.
template <typename Predicate>
bool WaitUntil(Predicate predicate, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return predicate();
}

// The port a component logged with `event` (its "port=N" field, e.g. admin_server_started), or
// nullopt before that line is there. The processes under test listen on port 0 and say where.
inline std::optional<int> LoggedPort(std::string_view log, std::string_view event) {
  const std::string marker = "event=" + std::string(event) + " ";
  const auto line = log.find(marker);
  if (line == std::string_view::npos) return std::nullopt;
  const auto end = log.find('\n', line);
  const std::string_view text = log.substr(line, end == std::string_view::npos ? end : end - line);
  const auto field = text.find(" port=");
  if (field == std::string_view::npos) return std::nullopt;
  int port = 0;
  const char* begin = text.data() + field + 6;
  const auto [stop, error] = std::from_chars(begin, text.data() + text.size(), port);
  if (error != std::errc() || stop == begin) return std::nullopt;
  return port;
}

inline constexpr const char* kModelplaneCrdsMissing =
    "the modelplane CRDs are not installed: kubectl apply -f crds/";

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubeconfig_path_ = EnvOr("MODELPLANE_TEST_KUBECONFIG");
    cluster_script_ = EnvOr("MODELPLANE_TEST_CLUSTER");
    if (kubeconfig_path_.empty()) {
      GTEST_SKIP() << "MODELPLANE_TEST_KUBECONFIG is not set: these tests need the local "
                      "control plane; scripts/test.sh starts one and sets it";
    }
    auto config = LoadKubeconfigFile(kubeconfig_path_);
    ASSERT_TRUE(config.has_value()) << config.error().ToString();
    config_ = *config;
    KubeClientOptions options;
    options.qps = 2000;  // tests create thousands of objects; the server copes on loopback
    options.burst = 2000;
    auto client = KubeClient::Create(config_, options, clock_);
    ASSERT_TRUE(client.has_value()) << client.error().ToString();
    client_ = std::move(*client);
    auto watcher = Watcher::Create(config_);
    ASSERT_TRUE(watcher.has_value()) << watcher.error().ToString();
    watcher_ = std::move(*watcher);

    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("mp-") + info->name();
    // A DNS label: lower case, and '-' for what a test's name may hold besides letters and
    // digits (DISABLED_ run with --gtest_also_run_disabled_tests).
    for (char& c : name) {
      const auto byte = static_cast<unsigned char>(c);
      c = std::isalnum(byte) != 0 ? static_cast<char>(std::tolower(byte)) : '-';
    }
    namespace_ = name.substr(0, 50) + "-" + std::to_string(::getpid() % 100000);
    auto created = client_->Create(
        resources::Namespaces(), "",
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", namespace_}}}});
    ASSERT_TRUE(created.has_value()) << created.error().ToString();
  }

  void TearDown() override {
    if (client_ && !namespace_.empty()) {
      for (const std::string& other : other_namespaces_) {
        (void)client_->Delete(resources::Namespaces(), "", other);
      }
      (void)client_->Delete(resources::Namespaces(), "", namespace_);
    }
  }

  // Another tenant's namespace for this test ("<namespace_>-b", then -c, ...), deleted with the
  // test's own; "" (and a test failure) when it cannot be created.
  std::string CreateOtherNamespace() {
    std::string name =
        namespace_ + "-" + static_cast<char>('b' + static_cast<int>(other_namespaces_.size()));
    auto created = client_->Create(
        resources::Namespaces(), "",
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
    EXPECT_TRUE(created.has_value()) << created.error().ToString();
    if (!created) return "";
    other_namespaces_.push_back(name);
    return name;
  }

  // Whether the API server has the CustomResourceDefinition `name` ("modelquotas.modelplane.io").
  [[nodiscard]] bool CrdInstalled(std::string_view name) const {
    return client_
        ->Request("GET",
                  "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + std::string(name),
                  nullptr, "")
        .has_value();
  }

  // Both modelplane CRDs are served; tests that need them skip with kModelplaneCrdsMissing.
  [[nodiscard]] bool ModelplaneCrdsInstalled() const {
    return CrdInstalled("modelrevisions.modelplane.io") &&
           CrdInstalled("modelcaches.modelplane.io");
  }

  // Deletes every object of `type` in the test's namespace and waits until they are gone (their
  // finalizers released: ModelRevisions carry the operator's, so a running operator must see
  // the deletes). False when some are left after `timeout`.
  bool DeleteAllInNamespace(const ResourceType& type, std::chrono::milliseconds timeout) {
    if (auto objects = client_->ListAll(type, namespace_, {})) {
      for (const nlohmann::json& item : objects->items) {
        (void)client_->Delete(type, namespace_, item["metadata"]["name"].get<std::string>());
      }
    }
    return WaitUntil(
        [&] {
          auto left = client_->ListAll(type, namespace_, {});
          return left && left->items.empty();
        },
        timeout);
  }

  // The Events (events.k8s.io/v1) about the object `name` of the test's namespace, as listed:
  // what `kubectl describe` shows of it.
  std::vector<nlohmann::json> EventsAbout(const std::string& name) {
    std::vector<nlohmann::json> about;
    auto events = client_->ListAll(resources::Events(), namespace_, {});
    if (!events) return about;
    for (const nlohmann::json& event : events->items) {
      if (event.contains("regarding") && event["regarding"].value("name", "") == name) {
        about.push_back(event);
      }
    }
    return about;
  }

  // Runs e2e/cluster.sh with arguments (restart kube-apiserver, etcdctl ...).
  int Cluster(const std::string& arguments, std::string* output = nullptr) {
    if (cluster_script_.empty()) return -1;
    return RunCommand(cluster_script_ + " " + arguments + " 2>&1", output);
  }

  SystemClock clock_;
  std::string kubeconfig_path_;
  std::string cluster_script_;
  KubeConfig config_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<Watcher> watcher_;
  std::string namespace_;
  std::vector<std::string> other_namespaces_;  // CreateOtherNamespace's
};

// Why a test that needs ModelQuotas skips.
inline constexpr char kModelQuotaCrdMissing[] =
    "the ModelQuota CRD is not installed (kubectl apply -f crds/)";

inline nlohmann::json ConfigMap(const std::string& ns, const std::string& name,
                                const nlohmann::json& data,
                                const nlohmann::json& labels = nlohmann::json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
          {"data", data}};
}

}  // namespace modelplane::core::testing
