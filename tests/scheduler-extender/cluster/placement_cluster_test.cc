// The real kube-scheduler calling the real modelplane-scheduler-extender on the local control
// plane (e2e/cluster.sh): ModelCache statuses say which KWOK node holds a ModelRevision Ready
// and which cannot fit it, a pod names the revision, and it must be bound to the node holding
// it. Run in both extender modes (nodeCacheCapable true and false).
//
// The test starts its own kube-scheduler with a scheduler name of its own, so it works on any
// cluster scripts/test.sh brings up and never races the cluster's scheduler for its pods.
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/http/http_client.h"
#include "core/kube/resource_type.h"
#include "tests/core/kube_cluster/cluster_fixture.h"

extern char** environ;

namespace modelplane::extender {
namespace {

using core::testing::EnvOr;
using core::testing::RunCommand;
using core::testing::WaitUntil;
using nlohmann::json;
using std::chrono::seconds;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr const char* kDigest =
    "sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
constexpr const char* kHolder = "gpu-node-2";    // holds the revision Ready
constexpr const char* kTooSmall = "gpu-node-1";  // its cache cannot fit the revision

// A child process with stdout and stderr in a file, stopped with SIGTERM (then SIGKILL).
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { Stop(); }

  bool Start(const std::vector<std::string>& argv, const std::string& log_path) {
    log_path_ = log_path;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    const int rc = posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) pid_ = -1;
    return rc == 0;
  }

  bool Running() const {
    if (pid_ <= 0) return false;
    int status = 0;
    return ::waitpid(pid_, &status, WNOHANG) == 0;
  }

  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::string Log() const {
    std::ifstream file(log_path_);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
  }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

// A loopback port free right now (the kernel's pick, released again).
std::uint16_t FreePort() {
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

json Revision(const std::string& ns) {
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

json CacheStatus(std::int64_t capacity, std::int64_t used, bool holds) {
  json status = {{"capacityBytes", capacity}, {"usedBytes", used}, {"reservedBytes", 0}};
  if (holds) {
    status["revisions"] = {{{"digest", kDigest},
                            {"state", "Ready"},
                            {"bytesDone", 40 * kGiB},
                            {"bytesTotal", 40 * kGiB}}};
  }
  return status;
}

class PlacementClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    work_ = std::filesystem::temp_directory_path() / ("mp-extender-" + namespace_);
    std::filesystem::create_directories(work_);
    scheduler_name_ = "modelplane-test-" + std::to_string(::getpid());
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
    scheduler_.Stop();
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

  // Starts the extender binary on `port` (0: a free one) serving <path_prefix>/<verb>.
  void StartExtender(std::uint16_t port = 0, const std::string& path_prefix = "/scheduler") {
    extender_port_ = port != 0 ? port : FreePort();
    admin_port_ = FreePort();
    const std::string config = (work_ / "extender.yaml").string();
    std::ofstream(config) << "server: {address: 127.0.0.1, port: " << extender_port_
                          << ", pathPrefix: '" << path_prefix << "'}\n"
                          << "admin: {address: 127.0.0.1, port: " << admin_port_ << "}\n"
                          << "kubernetes: {kubeconfig: " << kubeconfig_path_ << "}\n";
    ASSERT_TRUE(extender_.Start(
        {std::string(MODELPLANE_BINARY_DIR) + "/scheduler-extender/modelplane-scheduler-extender",
         "--config", config},
        (work_ / "extender.log").string()));
    core::ClientOptions options;
    options.retry.max_attempts = 1;
    auto client = core::HttpClient::Create(options);
    ASSERT_TRUE(client);
    http_ = std::move(*client);
    // Ready only once both informers listed: then the inventory above is in it.
    ASSERT_TRUE(WaitUntil(
        [&] {
          return extender_.Running() && http_->Fetch({.url = AdminUrl("/readyz")}).has_value();
        },
        seconds(30)))
        << extender_.Log();
  }

  void StartScheduler(bool node_cache_capable) {
    const std::string config = (work_ / "scheduler.yaml").string();
    std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                          << "kind: KubeSchedulerConfiguration\n"
                          << "clientConnection: {kubeconfig: " << kubeconfig_path_ << "}\n"
                          << "leaderElection: {leaderElect: false}\n"
                          << "profiles:\n- schedulerName: " << scheduler_name_ << "\n"
                          << "extenders:\n"
                          << "- urlPrefix: http://127.0.0.1:" << extender_port_ << "/scheduler\n"
                          << "  filterVerb: filter\n"
                          << "  prioritizeVerb: prioritize\n"
                          << "  weight: 5\n"
                          << "  enableHTTPS: false\n"
                          << "  nodeCacheCapable: " << (node_cache_capable ? "true" : "false")
                          << "\n"
                          << "  ignorable: false\n"
                          << "  httpTimeout: 5s\n";
    ASSERT_TRUE(scheduler_.Start({"kube-scheduler", "--config=" + config, "--secure-port=0"},
                                 (work_ / "kube-scheduler.log").string()))
        << "kube-scheduler is not on PATH: eval \"$(e2e/cluster.sh env)\" puts it there";
    std::this_thread::sleep_for(seconds(1));
    ASSERT_TRUE(scheduler_.Running()) << scheduler_.Log();
  }

  std::string AdminUrl(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(admin_port_) + path;
  }

  json Pod(const std::string& name, const std::string& revision) const {
    json metadata = {{"name", name}, {"namespace", namespace_}};
    if (!revision.empty()) metadata["annotations"] = {{"modelplane.io/revision", revision}};
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", metadata},
            {"spec",
             {{"schedulerName", scheduler_name_},
              {"nodeSelector", {{"modelplane.io/gpu", "true"}}},
              {"containers", {{{"name", "engine"}, {"image", "registry.k8s.io/pause:3.10"}}}}}}};
  }

  // Creates the pod and waits until it is bound; returns the node.
  std::string ScheduleAndWait(const json& pod) {
    const std::string name = pod["metadata"]["name"];
    auto created = client_->Create(core::resources::Pods(), namespace_, pod);
    if (!created) {
      ADD_FAILURE() << created.error().ToString();
      return "";
    }
    std::string node;
    const bool bound = WaitUntil(
        [&] {
          auto got = client_->Get(core::resources::Pods(), namespace_, name);
          if (got) node = got->value("spec", json::object()).value("nodeName", "");
          return !node.empty();
        },
        seconds(60));
    if (!bound) {
      ADD_FAILURE() << "pod " << name << " was not bound\n--- scheduler\n"
                    << scheduler_.Log() << "\n--- extender\n"
                    << extender_.Log();
    }
    return node;
  }

  // With `form` set, the test's own kube-scheduler calls the extender in that form; without,
  // the cluster's scheduler does (see the last test).
  void PlacesThePodOnTheNodeHoldingItsRevision(std::optional<bool> node_cache_capable) {
    if (node_cache_capable) {
      StartExtender();
      if (HasFatalFailure()) return;
      StartScheduler(*node_cache_capable);
      if (HasFatalFailure()) return;
    }

    for (int i = 0; i < 3; ++i) {
      const std::string name = "engine-" + std::to_string(i);
      EXPECT_EQ(ScheduleAndWait(Pod(name, "llama-r1")), kHolder) << extender_.Log();
    }
    // A pod modelplane does not manage goes through untouched, wherever the scheduler likes.
    EXPECT_FALSE(ScheduleAndWait(Pod("unmanaged", "")).empty());
    // A pod naming a revision that does not exist is not failed either.
    EXPECT_FALSE(ScheduleAndWait(Pod("unknown", "no-such-revision")).empty());

    // The decision log says why: the holder scored 10, the small cache was filtered out.
    const std::string log = extender_.Log();
    const std::string pod = "pod=" + namespace_ + "/engine-0";
    std::istringstream lines(log);
    bool saw_filter = false;
    bool saw_prioritize = false;
    for (std::string line; std::getline(lines, line);) {
      if (line.find(pod) == std::string::npos) continue;
      if (line.find("event=filter_decided") != std::string::npos) {
        saw_filter = true;
        EXPECT_NE(line.find(std::string(kTooSmall) + ": modelplane: model cache has"),
                  std::string::npos)
            << line;
        EXPECT_NE(line.find(std::string(kHolder)), std::string::npos) << line;
        if (node_cache_capable) {
          EXPECT_NE(line.find(*node_cache_capable ? "form=names" : "form=list"), std::string::npos)
              << line;
        }
      }
      if (line.find("event=prioritize_decided") != std::string::npos) {
        saw_prioritize = true;
        EXPECT_NE(line.find(std::string(kHolder) + ":10"), std::string::npos) << line;
        EXPECT_EQ(line.find(std::string(kTooSmall) + ":"), std::string::npos)
            << "a filtered node must not be prioritized: " << line;
      }
    }
    EXPECT_TRUE(saw_filter) << log;
    EXPECT_TRUE(saw_prioritize) << log;
    EXPECT_NE(log.find("outcome=unknown_revision"), std::string::npos) << log;

    // A revoked revision runs nowhere: the pod stays Pending, and says why.
    json revoked = Revision(namespace_);
    revoked["metadata"]["name"] = "revoked-r";
    revoked["spec"]["revoked"] = true;
    ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_, revoked));
    ASSERT_TRUE(client_->Create(core::resources::Pods(), namespace_, Pod("revoked", "revoked-r")));
    std::string message;
    EXPECT_TRUE(WaitUntil(
        [&] {
          auto pod_object = client_->Get(core::resources::Pods(), namespace_, "revoked");
          if (!pod_object) return false;
          for (const json& condition :
               pod_object->value("status", json::object()).value("conditions", json::array())) {
            if (condition.value("type", "") == "PodScheduled") {
              message = condition.value("message", "");
            }
          }
          return message.find("is revoked") != std::string::npos;
        },
        seconds(30)))
        << "PodScheduled message: " << message << "\n"
        << extender_.Log();
    auto still = client_->Get(core::resources::Pods(), namespace_, "revoked");
    ASSERT_TRUE(still);
    EXPECT_EQ(still->value("spec", json::object()).value("nodeName", ""), "");

    auto metrics = http_->Fetch({.url = AdminUrl("/metrics")});
    ASSERT_TRUE(metrics) << metrics.error().ToString();
    EXPECT_NE(
        metrics->body.find("modelplane_extender_request_duration_seconds_count{verb=\"filter\"}"),
        std::string::npos);
  }

  std::filesystem::path work_;
  std::string scheduler_name_;
  std::vector<std::string> created_caches_;
  std::uint16_t extender_port_ = 0;
  std::uint16_t admin_port_ = 0;
  ChildProcess extender_;
  ChildProcess scheduler_;
  std::unique_ptr<core::HttpClient> http_;
};

TEST_F(PlacementClusterTest, NodeCacheCapableScheduler) {
  PlacesThePodOnTheNodeHoldingItsRevision(true);
}

TEST_F(PlacementClusterTest, FullNodeListScheduler) {
  PlacesThePodOnTheNodeHoldingItsRevision(false);
}

// The way e2e/cluster.sh wires it: the cluster's own kube-scheduler, started with
// MODELPLANE_EXTENDER_URL=http://127.0.0.1:<port><prefix>, calls whatever listens there for its
// modelplane-scheduler profile. Runs only on a cluster started that way.
TEST_F(PlacementClusterTest, ClusterSchedulerCallsTheExtenderAtItsUrl) {
  const std::string url = EnvOr("MODELPLANE_EXTENDER_URL");
  if (url.empty()) GTEST_SKIP() << "the cluster was not started with MODELPLANE_EXTENDER_URL";
  const std::string origin = "http://127.0.0.1:";
  ASSERT_EQ(url.rfind(origin, 0), 0u) << url;
  const std::size_t slash = url.find('/', origin.size());
  const int port = std::stoi(url.substr(origin.size(), slash - origin.size()));
  StartExtender(static_cast<std::uint16_t>(port),
                slash == std::string::npos ? "" : url.substr(slash));
  if (HasFatalFailure()) return;
  scheduler_name_ = "modelplane-scheduler";
  PlacesThePodOnTheNodeHoldingItsRevision(std::nullopt);
}

}  // namespace
}  // namespace modelplane::extender
