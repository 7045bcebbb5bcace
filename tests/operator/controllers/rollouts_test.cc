// Rollouts driven by kubectl against the real API server, controller-manager (Deployments,
// StatefulSets), kube-scheduler and KWOK nodes: the operator stages the new revision where the
// old pods run before it lets any new pod go, keeps the old one pinned for undo, and unpins it
// after the rollback window. Agents are played by writing ModelCache statuses: a node reports a
// revision Ready when the test says so. The pod templates carry the scheduling gate themselves
// (in a cluster the admission webhook adds it); they carry no readiness gate, since no agent
// would set it here.
#include <algorithm>

#include <gmock/gmock.h>

#include "core/api/timestamp.h"
#include "tests/operator/controllers/controllers_fixture.h"

namespace modelplane::controller {
namespace {

using cluster_testing::ControllersTest;
using cluster_testing::kKwokNodes;
using cluster_testing::kWait;
using cluster_testing::Revision;
using cluster_testing::RevisionWithContent;
using core::testing::WaitUntil;
using nlohmann::json;
using ::testing::HasSubstr;

json PodTemplate(const std::string& revision) {
  return {
      {"metadata",
       {{"labels", {{"app", "llama"}}}, {"annotations", {{"modelplane.io/revision", revision}}}}},
      {"spec",
       {{"schedulingGates", json::array({{{"name", "modelplane.io/weights"}}})},
        {"tolerations", json::array({{{"operator", "Exists"}}})},
        {"nodeSelector", {{"type", "kwok"}}},
        {"terminationGracePeriodSeconds", 0},
        {"containers", json::array({{{"name", "server"},
                                     {"image", "vllm/vllm-openai:v0.11.0"},
                                     {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
}

class RolloutsTest : public ControllersTest {
 protected:
  void TearDown() override {
    if (client_) {
      for (const auto& type : {core::resources::Deployments(), core::resources::StatefulSets()}) {
        if (auto items = client_->ListAll(type, namespace_, {})) {
          for (const json& item : items->items) {
            (void)client_->Delete(type, namespace_, item["metadata"]["name"],
                                  {.propagation_policy = "Foreground"});
          }
        }
      }
      WaitUntil(
          [&] {
            auto pods = client_->ListAll(core::resources::Pods(), namespace_, {});
            return pods && pods->items.empty();
          },
          kWait);
    }
    ControllersTest::TearDown();
  }

  std::string Digest(const std::string& revision) {
    std::string digest;
    WaitUntil(
        [&] {
          const json object = GetRevision(revision);
          digest = object.contains("status") ? object["status"].value("digest", "") : "";
          return !digest.empty();
        },
        kWait);
    return digest;
  }

  // What every node reports: the digests it holds Ready.
  void Hold(const std::string& node, const std::vector<std::string>& digests) {
    json revisions = json::array();
    for (const std::string& digest : digests) {
      revisions.push_back({{"digest", digest},
                           {"state", "Ready"},
                           {"bytesDone", 4196},
                           {"bytesTotal", 4196},
                           {"sourceTier", "local"}});
    }
    WriteCacheStatus(node, revisions);
  }

  // Entries for namespace_/revision by node.
  std::map<std::string, json> Entries(const std::string& revision) {
    std::map<std::string, json> entries;
    auto caches = client_->ListAll(core::resources::ModelCaches(), "", {});
    if (!caches) return entries;
    for (const json& cache : caches->items) {
      for (const json& entry : cache["spec"].value("revisions", json::array())) {
        if (entry["revision"].value("namespace", "") == namespace_ &&
            entry["revision"].value("name", "") == revision) {
          entries[cache["metadata"]["name"]] = entry;
        }
      }
    }
    return entries;
  }

  std::string GetPodNode(const std::string& name) {
    auto pod = client_->Get(core::resources::Pods(), namespace_, name);
    return pod ? (*pod)["spec"].value("nodeName", "") : std::string();
  }

  json Pods() {
    auto pods = client_->ListAll(core::resources::Pods(), namespace_, {});
    return pods ? pods->items : json::array();
  }

  struct Census {
    int pods = 0;
    int ready = 0;
    int gated = 0;
    std::set<std::string> nodes;
  };
  // Pods naming `revision` that are Ready, that are gated, and where those bound run.
  Census Count(const std::string& revision) {
    Census census;
    for (const json& pod : Pods()) {
      if (pod["metadata"].contains("deletionTimestamp")) continue;
      if (pod["metadata"]["annotations"].value("modelplane.io/revision", "") != revision) continue;
      ++census.pods;
      if (pod["spec"].contains("schedulingGates")) ++census.gated;
      const std::string node = pod["spec"].value("nodeName", "");
      if (!node.empty()) census.nodes.insert(node);
      for (const json& condition : pod["status"].value("conditions", json::array())) {
        if (condition["type"] == "Ready" && condition["status"] == "True") ++census.ready;
      }
    }
    return census;
  }

  std::string EventNotes(const std::string& kind, const std::string& name) {
    std::string notes;
    if (auto events = client_->ListAll(core::resources::Events(), namespace_, {})) {
      for (const json& event : events->items) {
        if (event["regarding"].value("kind", "") == kind &&
            event["regarding"].value("name", "") == name) {
          notes += event.value("reason", "") + ": " + event.value("note", "") + "\n";
        }
      }
    }
    return notes;
  }

  void SetTemplateRevision(const core::ResourceType& type, const std::string& name,
                           const std::string& revision) {
    auto patched = client_->Patch(
        type, namespace_, name, core::PatchType::kMerge,
        {{"spec",
          {{"template",
            {{"metadata", {{"annotations", {{"modelplane.io/revision", revision}}}}}}}}}});
    ASSERT_TRUE(patched) << patched.error().ToString();
  }

  void SetPaused(bool paused) {
    auto patched = client_->Patch(core::resources::Deployments(), namespace_, "llama",
                                  core::PatchType::kMerge, {{"spec", {{"paused", paused}}}});
    ASSERT_TRUE(patched) << patched.error().ToString();
  }
};

TEST_F(RolloutsTest, ADeploymentRollsForwardAndBackOverPrestagedNodes) {
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "llama-r1", 'a', 4)));
  json r2 = RevisionWithContent(namespace_, "llama-r2", 'b', 0);
  r2["spec"]["retention"] = {{"rollbackWindow", "1h"}};
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_, r2));
  const std::string r1_digest = Digest("llama-r1");
  const std::string r2_digest = Digest("llama-r2");
  ASSERT_FALSE(r1_digest.empty());
  ASSERT_FALSE(r2_digest.empty());
  for (const std::string_view node : kKwokNodes) Hold(std::string(node), {r1_digest});

  const json deployment = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", "llama"}, {"namespace", namespace_}}},
      {"spec",
       {{"replicas", 4},
        {"strategy",
         {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 1}, {"maxUnavailable", 0}}}}},
        {"selector", {{"matchLabels", {{"app", "llama"}}}}},
        {"template", PodTemplate("llama-r1")}}}};
  ASSERT_TRUE(client_->Create(core::resources::Deployments(), namespace_, deployment));
  ASSERT_TRUE(WaitUntil([&] { return Count("llama-r1").ready == 4; }, kWait));
  const std::set<std::string> r1_nodes = Count("llama-r1").nodes;

  // Move the template to r2: one surge pod appears, gated, and r2 is asked for where r1 runs.
  SetTemplateRevision(core::resources::Deployments(), "llama", "llama-r2");
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto entries = Entries("llama-r2");
        for (const std::string& node : r1_nodes) {
          if (!entries.contains(node) || entries.at(node)["reason"] != "rollout") return false;
        }
        return Count("llama-r2").gated >= 1;
      },
      kWait))
      << ::testing::PrintToString(Entries("llama-r2"));
  // The readiness-slope alert's gauges show the rollout: 4 replicas, none Ready on r2 yet.
  const std::string rollout = "{namespace=\"" + namespace_ +
                              "\",kind=\"Deployment\",workload=\"llama\",revision=\"llama-r2\"}";
  EXPECT_TRUE(WaitUntil(
      [&] {
        const std::string text = registry_.ExposeText();
        return text.find("modelplane_rollout_replicas" + rollout + " 4\n") != std::string::npos &&
               text.find("modelplane_rollout_ready_replicas" + rollout + " 0\n") !=
                   std::string::npos;
      },
      kWait))
      << registry_.ExposeText();
  // r1 is pinned for undo where its pods run, once the new ReplicaSet shows that the
  // Deployment rolls away from it (kube-controller-manager makes it, maybe after r2's entries).
  EXPECT_TRUE(WaitUntil(
      [&] {
        const auto entries = Entries("llama-r1");
        return std::ranges::all_of(r1_nodes, [&](const std::string& node) {
          return entries.contains(node) && entries.at(node)["pinned"] == true;
        });
      },
      kWait))
      << ::testing::PrintToString(Entries("llama-r1"));
  // Ready on all but one of those nodes: still no new pod goes.
  const std::string last = *r1_nodes.rbegin();
  for (const std::string& node : r1_nodes) {
    if (node != last) Hold(node, {r1_digest, r2_digest});
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        return EventNotes("Deployment", "llama")
                   .find("Ready on " + std::to_string(r1_nodes.size() - 1)) != std::string::npos;
      },
      kWait))
      << EventNotes("Deployment", "llama");
  // The pass that said so has returned, with every pass begun before it: had one let a new pod
  // go, that pod would be ungated now (binding and readiness come later, the gate goes in the
  // pass).
  ASSERT_TRUE(WaitForRevisionPasses());
  const Census waiting = Count("llama-r2");
  EXPECT_EQ(waiting.ready, 0) << "a new pod went before r2 was prestaged everywhere";
  EXPECT_GE(waiting.gated, 1);
  EXPECT_TRUE(waiting.nodes.empty()) << "every new pod is still gated, none bound";

  // The last node reports it: the first new pod goes; pause as soon as it is Ready.
  Hold(last, {r1_digest, r2_digest});
  ASSERT_TRUE(WaitUntil([&] { return Count("llama-r2").ready >= 1; }, kWait));
  SetPaused(true);
  EXPECT_THAT(EventNotes("Deployment", "llama"), HasSubstr("WeightsPrestaged"));
  // The operator has seen the pause once it says so, and kube-controller-manager once the
  // Deployment's status has observed the paused generation.
  ASSERT_TRUE(WaitUntil(
      [&] { return EventNotes("Deployment", "llama").find("is paused") != std::string::npos; },
      kWait))
      << EventNotes("Deployment", "llama");
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto object = client_->Get(core::resources::Deployments(), namespace_, "llama");
        return object && (*object)["status"].value("observedGeneration", std::int64_t{0}) >=
                             (*object)["metadata"].value("generation", std::int64_t{1});
      },
      kWait));
  // A new pod let go in the moment before the pause may still be on its way to Ready (slow on a
  // loaded machine): count once every new pod is either gated or Ready.
  ASSERT_TRUE(WaitUntil(
      [&] {
        const Census now = Count("llama-r2");
        return now.pods == now.gated + now.ready;
      },
      kWait));
  const Census paused_new = Count("llama-r2");
  const Census paused_old = Count("llama-r1");
  // Every pass begun by now has returned, and each after the pause saw it: a pass that let a
  // new pod go would show in the gated count at once (its readiness would come later).
  ASSERT_TRUE(WaitForRevisionPasses());
  const Census still_new = Count("llama-r2");
  EXPECT_EQ(still_new.gated, paused_new.gated) << "the paused rollout let a new pod go";
  EXPECT_EQ(still_new.ready, paused_new.ready) << "the paused rollout moved on";
  EXPECT_EQ(Count("llama-r1").ready, paused_old.ready) << "the paused rollout moved on";
  // The first new pod is Ready; a second one may have been let go in the moment before the
  // pause, and none after it.
  EXPECT_GE(paused_new.ready, 1);
  EXPECT_LE(paused_new.ready, 2);
  // When the second is Ready before kube-controller-manager sees the pause, it takes one old
  // pod away for it: two and two.
  EXPECT_GE(paused_new.ready + paused_old.ready, 4)
      << "maxUnavailable 0: old pods go only as new ones are Ready";
  EXPECT_THAT(EventNotes("Deployment", "llama"), HasSubstr("is paused"));
  std::cout << "paused at " << paused_new.ready << " new and " << paused_old.ready
            << " old pods Ready\n";

  // Resume: the rollout completes, every new pod on a node that holds r2.
  SetPaused(false);
  ASSERT_TRUE(WaitUntil(
      [&] { return Count("llama-r2").ready == 4 && Count("llama-r1").ready == 0; }, kWait));
  for (const std::string& node : Count("llama-r2").nodes) {
    EXPECT_TRUE(r1_nodes.contains(node)) << node << " did not hold r2";
  }
  // Complete: the rollout's series are gone.
  EXPECT_TRUE(WaitUntil(
      [&] { return registry_.ExposeText().find("workload=\"llama\"") == std::string::npos; },
      kWait))
      << registry_.ExposeText();
  // r1 stays pinned, now until the end of its rollback window (the default, 1h).
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto entries = Entries("llama-r1");
        return !entries.empty() && entries.begin()->second.contains("pinnedUntil");
      },
      kWait))
      << ::testing::PrintToString(Entries("llama-r1"));
  // The same pass writes the status after the entries.
  ASSERT_TRUE(WaitUntil(
      [&] {
        const json status = RevisionStatus("llama-r1");
        return status.contains("workloads") && status["workloads"][0]["role"] == "previous" &&
               status["workloads"][0].contains("completedAt");
      },
      kWait))
      << RevisionStatus("llama-r1").dump();
  EXPECT_EQ(GetRevision("llama-r2")["status"]["workloads"][0]["role"], "current");

  // kubectl rollout undo: back to r1, which every node still holds: nothing to stage.
  SetTemplateRevision(core::resources::Deployments(), "llama", "llama-r1");
  ASSERT_TRUE(WaitUntil(
      [&] { return Count("llama-r1").ready == 4 && Count("llama-r2").ready == 0; }, kWait));
  for (const std::string& node : Count("llama-r1").nodes) {
    EXPECT_TRUE(r1_nodes.contains(node)) << node;
  }
  // r2 is the previous revision now, pinned for undo. A node where an r2 pod is still
  // terminating keeps its entry as in-use (a live pod says more than a pin) until the pod goes.
  EXPECT_TRUE(WaitUntil(
      [&] {
        const auto pins = Entries("llama-r2");
        return !pins.empty() && std::ranges::all_of(pins, [](const auto& entry) {
          return entry.second.value("reason", "") == "rollback";
        });
      },
      kWait))
      << "r2's entries are not all rollback pins";
}

TEST_F(RolloutsTest, ThePreviousRevisionIsUnpinnedAfterItsRollbackWindow) {
  json r1 = RevisionWithContent(namespace_, "llama-r1", 'c', 0);
  r1["spec"]["retention"] = {{"rollbackWindow", "4s"}};
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_, r1));
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "llama-r2", 'd', 0)));
  const std::string r1_digest = Digest("llama-r1");
  const std::string r2_digest = Digest("llama-r2");
  for (const std::string_view node : kKwokNodes) Hold(std::string(node), {r1_digest, r2_digest});
  const json deployment = {{"apiVersion", "apps/v1"},
                           {"kind", "Deployment"},
                           {"metadata", {{"name", "llama"}, {"namespace", namespace_}}},
                           {"spec",
                            {{"replicas", 2},
                             {"selector", {{"matchLabels", {{"app", "llama"}}}}},
                             {"template", PodTemplate("llama-r1")}}}};
  ASSERT_TRUE(client_->Create(core::resources::Deployments(), namespace_, deployment));
  ASSERT_TRUE(WaitUntil([&] { return Count("llama-r1").ready == 2; }, kWait));
  SetTemplateRevision(core::resources::Deployments(), "llama", "llama-r2");
  ASSERT_TRUE(WaitUntil([&] { return Count("llama-r2").ready == 2; }, kWait));
  // Pinned while the window lasts, gone after it.
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto entries = Entries("llama-r1");
        return !entries.empty() && entries.begin()->second.value("pinned", false) &&
               entries.begin()->second.contains("pinnedUntil");
      },
      kWait))
      << ::testing::PrintToString(Entries("llama-r1"));
  ASSERT_TRUE(WaitUntil([&] { return Entries("llama-r1").empty(); }, kWait))
      << ::testing::PrintToString(Entries("llama-r1"));
  const json status = RevisionStatus("llama-r1");
  EXPECT_EQ(status["workloads"][0]["role"], "previous") << "still the revision undo returns to";
}

TEST_F(RolloutsTest, ANamespaceQuotaLimitsPinsAndEndsThemAfterTheirLastUse) {
  if (!CrdInstalled("modelquotas.modelplane.io"))
    GTEST_SKIP() << core::testing::kModelQuotaCrdMissing;
  // One pinned copy (the fixture's revisions are 4196 bytes), each pin ending 8 s after the
  // revision's last use on its node, whatever the revision's own rollback window says.
  ASSERT_TRUE(client_->Create(core::resources::ModelQuotas(), namespace_,
                              {{"apiVersion", "modelplane.io/v1alpha1"},
                               {"kind", "ModelQuota"},
                               {"metadata", {{"name", "pins"}, {"namespace", namespace_}}},
                               {"spec", {{"pinnedBytes", 4196}, {"pinTtlAfterLastUse", "8s"}}}}));
  json r1 = RevisionWithContent(namespace_, "llama-r1", '7', 0);
  r1["spec"]["retention"] = {{"rollbackWindow", "1h"}};
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_, r1));
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "llama-r2", '8', 0)));
  const std::string r1_digest = Digest("llama-r1");
  const std::string r2_digest = Digest("llama-r2");
  // Every node holds both; r1 was last used now (as its pods stop, the agents say so).
  const auto report_use = [&] {
    const std::string now = core::api::FormatTimestamp(
        std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now()));
    for (const std::string_view node : kKwokNodes) {
      json revisions = json::array();
      for (const std::string& digest : {r1_digest, r2_digest}) {
        json held = {{"digest", digest},
                     {"state", "Ready"},
                     {"bytesDone", 4196},
                     {"bytesTotal", 4196},
                     {"sourceTier", "local"}};
        if (digest == r1_digest) held["lastUsed"] = now;
        revisions.push_back(std::move(held));
      }
      WriteCacheStatus(std::string(node), revisions);
    }
  };
  report_use();
  ASSERT_TRUE(client_->Create(core::resources::Deployments(), namespace_,
                              {{"apiVersion", "apps/v1"},
                               {"kind", "Deployment"},
                               {"metadata", {{"name", "llama"}, {"namespace", namespace_}}},
                               {"spec",
                                {{"replicas", 2},
                                 {"selector", {{"matchLabels", {{"app", "llama"}}}}},
                                 {"template", PodTemplate("llama-r1")}}}}));
  ASSERT_TRUE(WaitUntil([&] { return Count("llama-r1").ready == 2; }, kWait));
  SetTemplateRevision(core::resources::Deployments(), "llama", "llama-r2");
  ASSERT_TRUE(WaitUntil([&] { return Count("llama-r2").ready == 2; }, kWait));
  const auto used_at = std::chrono::system_clock::now();
  report_use();

  // One of the nodes its pods ran on (two, or three with a surge pod's) keeps r1 pinned, until
  // 8 s after its last use; the revision says why the others do not.
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto entries = Entries("llama-r1");
        return entries.size() == 1 && entries.begin()->second.value("pinned", false);
      },
      kWait))
      << ::testing::PrintToString(Entries("llama-r1"));
  const auto pinned_until = core::api::ParseTimestamp(
      Entries("llama-r1").begin()->second.value("pinnedUntil", std::string()));
  ASSERT_TRUE(pinned_until) << "the TTL sets the pin's end";
  EXPECT_LE(*pinned_until, used_at + std::chrono::seconds(10)) << "not the 1h rollback window";
  json within;
  for (const json& condition : RevisionStatus("llama-r1").value("conditions", json::array())) {
    if (condition.value("type", "") == "WithinQuota") within = condition;
  }
  EXPECT_EQ(within.value("reason", ""), "QuotaExceeded") << RevisionStatus("llama-r1").dump();
  EXPECT_THAT(within.value("message", ""), HasSubstr("pinned on 1 of "));

  // The TTL ends the pin; r1's bytes stay cached, evictable.
  ASSERT_TRUE(WaitUntil([&] { return Entries("llama-r1").empty(); }, kWait))
      << ::testing::PrintToString(Entries("llama-r1"));
}

TEST_F(RolloutsTest, AStatefulSetRollsPodByPodOverPrestagedNodes) {
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "llama-r1", 'e', 4)));
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "llama-r2", 'f', 0)));
  const std::string r1_digest = Digest("llama-r1");
  const std::string r2_digest = Digest("llama-r2");
  for (const std::string_view node : kKwokNodes) Hold(std::string(node), {r1_digest});
  const json set = {{"apiVersion", "apps/v1"},
                    {"kind", "StatefulSet"},
                    {"metadata", {{"name", "llama"}, {"namespace", namespace_}}},
                    {"spec",
                     {{"replicas", 2},
                      {"serviceName", "llama"},
                      {"selector", {{"matchLabels", {{"app", "llama"}}}}},
                      {"template", PodTemplate("llama-r1")}}}};
  ASSERT_TRUE(client_->Create(core::resources::StatefulSets(), namespace_, set));
  ASSERT_TRUE(WaitUntil([&] { return Count("llama-r1").ready == 2; }, kWait));
  const std::string pod0_node = GetPodNode("llama-0");

  // The highest ordinal goes first: llama-1 comes back naming r2 and waits for pod 0's node.
  SetTemplateRevision(core::resources::StatefulSets(), "llama", "llama-r2");
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto entries = Entries("llama-r2");
        return entries.contains(pod0_node) && entries.at(pod0_node)["reason"] == "rollout" &&
               Count("llama-r2").gated == 1;
      },
      kWait))
      << ::testing::PrintToString(Entries("llama-r2"));
  // Pod 1 left its node for the update; that node stays in the barrier.
  EXPECT_TRUE(WaitUntil(
      [&] {
        return EventNotes("StatefulSet", "llama").find("Ready on 0 of 2 nodes") !=
               std::string::npos;
      },
      kWait))
      << EventNotes("StatefulSet", "llama");
  // The pass that said so has returned, with every pass begun before it: had one let pod 1 go,
  // it would be ungated now.
  ASSERT_TRUE(WaitForRevisionPasses());
  const Census waiting = Count("llama-r2");
  EXPECT_EQ(waiting.gated, 1) << "pod 1 went before r2 was prestaged anywhere";
  EXPECT_EQ(waiting.ready, 0);
  for (const std::string_view node : kKwokNodes) Hold(std::string(node), {r1_digest, r2_digest});
  ASSERT_TRUE(WaitUntil([&] { return Count("llama-r2").ready == 2; }, kWait));
  EXPECT_EQ(Count("llama-r1").ready, 0);
}

}  // namespace
}  // namespace modelplane::controller
