// modelplane-operator as a process (the binary scripts/demo.sh and the chart run): two replicas
// against the real API server; only the leader reconciles, /readyz answers 200 once it has
// synced, and the standby takes over after the leader is killed.
#include <deque>
#include <fstream>
#include <sstream>

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/support/child_process.h"

namespace modelplane::controller {
namespace {

using core::testing::RunCommand;
using core::testing::WaitUntil;
using ::modelplane::testing::ChildProcess;
using nlohmann::json;

constexpr auto kProcessWait = std::chrono::seconds(30);

struct Replica {
  std::string log;
  ChildProcess process;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

json Revision(const std::string& ns, const std::string& name) {
  return {
      {"apiVersion", "modelplane.io/v1alpha1"},
      {"kind", "ModelRevision"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"files", json::array({{{"path", "model.safetensors"},
                                {"size", 64},
                                {"sha256", "sha256:" + std::string(64, '3')},
                                {"role", "weights"}}})},
        {"format", "safetensors"},
        {"engine", {{"name", "vllm"}, {"version", "0.6.0"}}},
        {"sources",
         json::array(
             {{{"name", "s3"}, {"type", "objectStore"}, {"objectStore", {{"bucket", "models"}}}}})},
        {"prestage", {{"nodeSelector", {{"type", "kwok"}}}, {"nodes", 1}}}}}};
}

class OperatorProcessTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!ModelplaneCrdsInstalled()) GTEST_SKIP() << core::testing::kModelplaneCrdsMissing;
    config_ = "/tmp/" + namespace_ + "-operator.yaml";
    std::ofstream(config_) << "admin: {address: 127.0.0.1, port: 0}\n"
                           << "kubernetes: {kubeconfig: " << kubeconfig_path_ << "}\n"
                           << "sourcePolicy: {objectStores: [{buckets: [models], "
                           << "nodeCredentials: true}]}\n"
                           << "leaderElection: {namespace: " << namespace_
                           << ", leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 500ms}\n"
                           << "controllers: {namespace: " << namespace_ << "}\n";
  }

  void TearDown() override {
    // Revisions carry the operator's finalizer: delete them while a replica still runs.
    if (client_ && !namespace_.empty()) {
      EXPECT_TRUE(DeleteAllInNamespace(core::resources::ModelRevisions(), kProcessWait));
    }
    for (Replica& replica : replicas_) {
      replica.process.Stop(SIGKILL);
      // Kept for a failed test's diagnosis; otherwise every run left them in /tmp.
      if (!HasFailure()) ::unlink(replica.log.c_str());
    }
    ::unlink(config_.c_str());
    ClusterTest::TearDown();
  }

  Replica& Launch(const std::string& name) {
    Replica replica{.log = "/tmp/" + namespace_ + "-" + name + ".log"};
    auto process = ChildProcess::Start(
        {std::string(MODELPLANE_BINARY_DIR) + "/operator/modelplane-operator", "--config", config_},
        {.log_path = replica.log});
    EXPECT_TRUE(process) << process.error().ToString();
    if (process) replica.process = std::move(*process);
    replicas_.push_back(std::move(replica));
    return replicas_.back();
  }

  static bool Logged(const Replica& replica, const std::string& event) {
    return ReadFile(replica.log).find("event=" + event) != std::string::npos;
  }

  // HTTP status of the replica's /readyz (port from its admin_server_started line), 0 if none.
  static int Readyz(const Replica& replica) {
    const auto port = core::testing::LoggedPort(ReadFile(replica.log), "admin_server_started");
    if (!port) return 0;
    std::string code;
    RunCommand("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:" + std::to_string(*port) +
                   "/readyz",
               &code);
    return std::atoi(code.c_str());
  }

  bool Reconciled(const std::string& name) {
    auto revision = client_->Get(core::resources::ModelRevisions(), namespace_, name);
    return revision && revision->contains("status") &&
           (*revision)["status"].value("desiredNodes", 0) == 1;
  }

  std::string config_;
  std::deque<Replica> replicas_;  // references stay valid as replicas are added
};

TEST_F(OperatorProcessTest, OnlyTheLeaderReconcilesAndTheStandbyTakesOver) {
  Replica& first = Launch("first");
  ASSERT_TRUE(WaitUntil([&] { return Logged(first, "controllers_started"); }, kProcessWait))
      << ReadFile(first.log);
  EXPECT_EQ(Readyz(first), 200);

  Replica& second = Launch("second");
  ASSERT_TRUE(WaitUntil([&] { return Logged(second, "leader_observed"); }, kProcessWait))
      << ReadFile(second.log);
  EXPECT_TRUE(WaitUntil([&] { return Readyz(second) == 200; }, kProcessWait));  // a ready standby
  EXPECT_FALSE(Logged(second, "leadership_acquired"));

  ASSERT_TRUE(
      client_->Create(core::resources::ModelRevisions(), namespace_, Revision(namespace_, "r1")));
  EXPECT_TRUE(WaitUntil([&] { return Reconciled("r1"); }, kProcessWait));

  // The leader dies without releasing the lease: the standby takes over once it expires and
  // reconciles what is created after.
  first.process.Stop(SIGKILL);
  ASSERT_TRUE(WaitUntil([&] { return Logged(second, "controllers_started"); }, kProcessWait))
      << ReadFile(second.log);
  EXPECT_EQ(Readyz(second), 200);
  ASSERT_TRUE(
      client_->Create(core::resources::ModelRevisions(), namespace_, Revision(namespace_, "r2")));
  EXPECT_TRUE(WaitUntil([&] { return Reconciled("r2"); }, kProcessWait));
}

}  // namespace
}  // namespace modelplane::controller
