// The real kube-scheduler calling the real modelplane-scheduler-extender on the local control
// plane (e2e/cluster.sh): ModelCache statuses say which KWOK node holds a ModelRevision Ready
// and which cannot fit it, a pod names the revision, and it must be bound to the node holding
// it. Run in both extender modes (nodeCacheCapable true and false), both over mutual TLS as the
// chart wires it, and once with a scheduler that has no client certificate (refused).
//
// The test starts its own kube-scheduler with a scheduler name of its own, so it works on any
// cluster scripts/test.sh brings up and never races the cluster's scheduler for its pods.
#include <sstream>

#include <gtest/gtest.h>

#include "tests/scheduler-extender/cluster/extender_cluster_fixture.h"
#include "tests/support/child_process.h"

namespace modelplane::extender {
namespace {

using core::testing::EnvOr;
using core::testing::WaitUntil;
using ::modelplane::testing::ChildProcess;
using nlohmann::json;
using std::chrono::seconds;
using testing::ExtenderLaunch;
using testing::kHolder;
using testing::kTooSmall;
using testing::Revision;

class PlacementClusterTest : public testing::ExtenderClusterTest {
 protected:
  void SetUp() override {
    ExtenderClusterTest::SetUp();
    scheduler_name_ = "modelplane-test-" + std::to_string(::getpid());
  }

  void TearDown() override {
    scheduler_.Stop();
    ExtenderClusterTest::TearDown();
  }

  // kube-scheduler calls the extender at UrlPrefix(); over mutual TLS (StartExtender's
  // mutual_tls) it verifies the extender against the test CA and presents its client
  // certificate, unless `client_certificate` is false.
  void StartScheduler(bool node_cache_capable, bool client_certificate = true) {
    const std::string config = (work_ / "scheduler.yaml").string();
    std::ostringstream tls;
    if (mutual_tls_) {
      tls << "  enableHTTPS: true\n"
          << "  tlsConfig:\n"
          << "    caFile: " << pki_.ca_file << "\n";
      if (client_certificate) {
        tls << "    certFile: " << pki_.client_certificate_file << "\n"
            << "    keyFile: " << pki_.client_key_file << "\n";
      }
    } else {
      tls << "  enableHTTPS: false\n";
    }
    std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                          << "kind: KubeSchedulerConfiguration\n"
                          << "clientConnection: {kubeconfig: " << kubeconfig_path_ << "}\n"
                          << "leaderElection: {leaderElect: false}\n"
                          << "profiles:\n- schedulerName: " << scheduler_name_ << "\n"
                          << "extenders:\n"
                          << "- urlPrefix: " << UrlPrefix() << "\n"
                          << "  filterVerb: filter\n"
                          << "  prioritizeVerb: prioritize\n"
                          << "  weight: 5\n"
                          << tls.str()
                          << "  nodeCacheCapable: " << (node_cache_capable ? "true" : "false")
                          << "\n"
                          << "  ignorable: false\n"
                          << "  httpTimeout: 5s\n";
    auto scheduler =
        ChildProcess::Start({"kube-scheduler", "--config=" + config, "--secure-port=0"},
                            {.log_path = (work_ / "kube-scheduler.log").string()});
    ASSERT_TRUE(scheduler) << scheduler.error().ToString()
                           << " (kube-scheduler is not on PATH? eval \"$(e2e/cluster.sh env)\" "
                              "puts it there)";
    scheduler_ = std::move(*scheduler);
    // It has read and checked its configuration (a bad one ends it) once it says it starts.
    ASSERT_TRUE(WaitUntil(
        [&] {
          return !scheduler_.Running() ||
                 scheduler_.Log().find("\"Starting Kubernetes Scheduler\"") != std::string::npos;
        },
        seconds(30)))
        << scheduler_.Log();
    ASSERT_TRUE(scheduler_.Running()) << scheduler_.Log();
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

  // With `form` set, the test's own kube-scheduler calls the extender in that form, over
  // mutual TLS; without, the cluster's scheduler does (see the last test).
  void PlacesThePodOnTheNodeHoldingItsRevision(std::optional<bool> node_cache_capable) {
    if (node_cache_capable) {
      StartExtender({.mutual_tls = true});
      if (HasFatalFailure()) return;
      EXPECT_NE(extender_.Log().find("tls=true mutual_tls=true"), std::string::npos)
          << extender_.Log();
      StartScheduler(*node_cache_capable);
      if (HasFatalFailure()) return;
    }

    // Created now, its pod only after the five below are bound, so the extender's watch has
    // long delivered it: a pod whose revision the inventory does not hold yet passes
    // everywhere by design (the "unknown" pod below), and the CI run of 2026-12-02 saw the
    // revoked pod placed when both were created back to back.
    json revoked = Revision(namespace_);
    revoked["metadata"]["name"] = "revoked-r";
    revoked["spec"]["revoked"] = true;
    ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_, revoked));

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

  std::string scheduler_name_;
  ChildProcess scheduler_;
};

TEST_F(PlacementClusterTest, NodeCacheCapableScheduler) {
  PlacesThePodOnTheNodeHoldingItsRevision(true);
}

TEST_F(PlacementClusterTest, FullNodeListScheduler) {
  PlacesThePodOnTheNodeHoldingItsRevision(false);
}

// Mutual TLS is enforced against the real scheduler: one that trusts the extender's CA but
// presents no client certificate gets no answer, so with ignorable: false the pod stays
// Pending, and kube-scheduler says why.
TEST_F(PlacementClusterTest, SchedulerWithoutAClientCertificateIsRefused) {
  StartExtender({.mutual_tls = true});
  if (HasFatalFailure()) return;
  StartScheduler(/*node_cache_capable=*/true, /*client_certificate=*/false);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(client_->Create(core::resources::Pods(), namespace_, Pod("refused", "llama-r1")));
  std::string message;
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto pod = client_->Get(core::resources::Pods(), namespace_, "refused");
        if (!pod) return false;
        for (const json& condition :
             pod->value("status", json::object()).value("conditions", json::array())) {
          if (condition.value("type", "") == "PodScheduled")
            message = condition.value("message", "");
        }
        return message.find("certificate") != std::string::npos;
      },
      seconds(60)))
      << "PodScheduled message: " << message << "\n--- scheduler\n"
      << scheduler_.Log() << "\n--- extender\n"
      << extender_.Log();
  auto pod = client_->Get(core::resources::Pods(), namespace_, "refused");
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->value("spec", json::object()).value("nodeName", ""), "");
  // The extender logs the refused handshake after its alert is on the wire, so the line may
  // trail the scheduler's report of it.
  EXPECT_TRUE(WaitUntil(
      [&] { return extender_.Log().find("event=tls_handshake_failed") != std::string::npos; },
      seconds(10)))
      << extender_.Log();
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
  StartExtender({.port = static_cast<std::uint16_t>(port),
                 .path_prefix = slash == std::string::npos ? "" : url.substr(slash)});
  if (HasFatalFailure()) return;
  scheduler_name_ = "modelplane-scheduler";
  PlacesThePodOnTheNodeHoldingItsRevision(std::nullopt);
}

}  // namespace
}  // namespace modelplane::extender
