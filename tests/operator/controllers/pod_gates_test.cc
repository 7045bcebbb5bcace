// The gate half of the ModelRevision controller against the real API server, scheduler and
// KWOK nodes: pods carrying modelplane's gate (as the webhook leaves them) are let go only once
// a node reports their revision Ready, narrowed to such nodes (at most 100 of them, zones in
// turn: with 120 KWOK nodes of its own), and the cluster's kube-scheduler then binds them there.
// Agents are played by writing ModelCache statuses, as in controllers_test.cc; the agents
// themselves run in e2e/scenario.sh.
#include <algorithm>
#include <iterator>

#include <gmock/gmock.h>

#include "core/api/serving_pod.h"
#include "core/json/json_lookup.h"
#include "tests/operator/controllers/controllers_fixture.h"

namespace modelplane::controller {
namespace {

using cluster_testing::ControllersTest;
using cluster_testing::kWait;
using cluster_testing::KwokNode;
using cluster_testing::Revision;
using core::testing::WaitUntil;
using nlohmann::json;

json GatedPod(const std::string& ns, const std::string& name, const std::string& revision,
              int gpus = 1) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"labels", {{"app", "llama"}}},
            {"annotations", {{"modelplane.io/revision", revision}}}}},
          {"spec",
           {{"schedulingGates", json::array({{{"name", "modelplane.io/weights"}}})},
            {"readinessGates", json::array({{{"conditionType", "modelplane.io/weights-ready"}}})},
            {"tolerations", json::array({{{"operator", "Exists"}}})},
            {"nodeSelector", {{"type", "kwok"}}},
            {"containers",
             json::array(
                 {{{"name", "server"},
                   {"image", "vllm/vllm-openai:v0.11.0"},
                   {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}}};
}

class PodGatesTest : public ControllersTest {
 protected:
  void TearDown() override {
    if (!client_) {  // SetUp skipped: no cluster
      ControllersTest::TearDown();
      return;
    }
    // Pods first: a bound pod keeps its node's in-use entry, and KWOK pods go at once.
    (void)client_->Request("DELETE", "/api/v1/namespaces/" + namespace_ + "/pods", nullptr, "");
    WaitUntil(
        [&] {
          auto pods = client_->ListAll(core::resources::Pods(), namespace_, {});
          return pods && pods->items.empty();
        },
        kWait);
    // Nodes are cluster-wide: the next test must see the cluster's four, and no cache of these.
    for (const std::string& node : added_nodes_) {
      (void)client_->Delete(core::resources::Nodes(), "", node);
    }
    EXPECT_TRUE(WaitUntil(
        [&] {
          auto caches = client_->ListAll(core::resources::ModelCaches(), "", {});
          if (!caches) return false;
          return std::none_of(caches->items.begin(), caches->items.end(), [&](const json& cache) {
            return added_nodes_.contains(cache["metadata"].value("name", ""));
          });
        },
        kWait));
    ControllersTest::TearDown();
  }

  // Adds KWOK nodes named wide-node-000, 001, ... with `type: kwok-wide` (so no other test's
  // pods or prestage select them), zones wide-zone-a, b, c in turn, and waits until each is
  // Ready and has its ModelCache. Returns the names by zone.
  std::map<std::string, std::vector<std::string>> AddNodes(int count) {
    std::map<std::string, std::vector<std::string>> by_zone;
    const json resources = {
        {"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}};
    for (int i = 0; i < count; ++i) {
      const std::string name = fmt::format("wide-node-{:03}", i);
      const std::string zone = fmt::format("wide-zone-{}", "abc"[i % 3]);
      auto created = client_->Create(
          core::resources::Nodes(), "",
          KwokNode(name,
                   {{"kubernetes.io/hostname", name}, {"type", "kwok-wide"}, {kZoneLabel, zone}},
                   resources));
      EXPECT_TRUE(created) << created.error().ToString();
      added_nodes_.insert(name);
      by_zone[zone].push_back(name);
    }
    const auto ready_with_caches = [&] {
      auto nodes =
          client_->ListAll(core::resources::Nodes(), "", {.label_selector = "type=kwok-wide"});
      auto caches = client_->ListAll(core::resources::ModelCaches(), "", {});
      if (!nodes || !caches || nodes->items.size() != static_cast<std::size_t>(count)) return false;
      std::set<std::string> with_cache;
      for (const json& cache : caches->items)
        with_cache.insert(cache["metadata"].value("name", ""));
      return std::all_of(nodes->items.begin(), nodes->items.end(), [&](const json& node) {
        bool ready = false;
        for (const json& condition : node["status"].value("conditions", json::array())) {
          ready |=
              condition.value("type", "") == "Ready" && condition.value("status", "") == "True";
        }
        return ready && with_cache.contains(node["metadata"].value("name", ""));
      });
    };
    EXPECT_TRUE(WaitUntil(ready_with_caches, kWait)) << "KWOK or the operator did not catch up";
    return by_zone;
  }

  std::set<std::string> NarrowedTo(const std::string& pod) {
    std::set<std::string> nodes;
    const json object = GetPod(pod);
    const json* terms = core::FindMember(
        object, {"spec", "affinity", "nodeAffinity",
                 "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
    if (terms == nullptr) return nodes;
    for (const json& term : *terms) {
      for (const json& field : term.value("matchFields", json::array())) {
        for (const json& value : field.value("values", json::array())) nodes.insert(value);
      }
    }
    return nodes;
  }

  json GetPod(const std::string& name) {
    auto pod = client_->Get(core::resources::Pods(), namespace_, name);
    return pod ? *pod : json();
  }

  static bool Gated(const json& pod) {
    if (!pod.contains("spec") || !pod["spec"].contains("schedulingGates")) return false;
    for (const json& gate : pod["spec"]["schedulingGates"]) {
      if (gate.value("name", "") == "modelplane.io/weights") return true;
    }
    return false;
  }

  // Notes of the Events about a pod, oldest first.
  std::vector<std::string> EventNotes(const std::string& pod) {
    std::vector<std::string> notes;
    for (const json& event : EventsAbout(pod)) notes.push_back(event.value("note", ""));
    return notes;
  }

  bool HasEventContaining(const std::string& pod, const std::string& text) {
    for (const std::string& note : EventNotes(pod)) {
      if (note.find(text) != std::string::npos) return true;
    }
    return false;
  }

  std::string DigestOf(const std::string& revision) {
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

  // Caches listing the revision, with the reason of their entry.
  std::map<std::string, std::string> Entries(const std::string& revision) {
    std::map<std::string, std::string> entries;
    auto caches = client_->ListAll(core::resources::ModelCaches(), "", {});
    if (!caches) return entries;
    for (const json& cache : caches->items) {
      for (const json& entry : cache["spec"].value("revisions", json::array())) {
        if (entry["revision"].value("namespace", "") == namespace_ &&
            entry["revision"].value("name", "") == revision) {
          entries[cache["metadata"]["name"]] = entry.value("reason", "");
        }
      }
    }
    return entries;
  }

  // `proven`: the revisions whose own sources the node says served the bytes; empty: those of
  // the digest that exist now (WithOwnSourceProofs).
  void ReportReady(const std::string& node, const std::string& digest,
                   const std::vector<std::string>& proven = {}) {
    json entry = {{"digest", digest},
                  {"state", "Ready"},
                  {"bytesDone", 4196},
                  {"bytesTotal", 4196},
                  {"sourceTier", "objectStore"}};
    if (!proven.empty()) {
      entry["sourceProofs"] = json::array();
      for (const std::string& name : proven) {
        entry["sourceProofs"].push_back(
            {{"revision", {{"namespace", namespace_}, {"name", name}}}, {"state", "Proven"}});
      }
    }
    WriteCacheStatus(node, json::array({entry}));
  }

  std::set<std::string> added_nodes_;  // by AddNodes, deleted in TearDown
};

TEST_F(PodGatesTest, APodIsLetGoOnlyWhereItsRevisionIsReady) {
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "llama-r1", 0)));
  const std::string digest = DigestOf("llama-r1");
  ASSERT_FALSE(digest.empty());
  ASSERT_TRUE(client_->Create(core::resources::Pods(), namespace_,
                              GatedPod(namespace_, "llama-0", "llama-r1")));

  // Nowhere yet: the operator asks one node to stage it and tells the pod.
  std::string staging_node;
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto entries = Entries("llama-r1");
        if (entries.size() != 1 || entries.begin()->second != "in-use") return false;
        staging_node = entries.begin()->first;
        return true;
      },
      kWait));
  ASSERT_TRUE(WaitUntil([&] { return HasEventContaining("llama-0", "staging queued"); }, kWait))
      << ::testing::PrintToString(EventNotes("llama-0"));
  // The pass that said so has returned, with every pass begun before it: had one let the pod
  // go, its gate would be gone now.
  ASSERT_TRUE(WaitForRevisionPasses());
  EXPECT_TRUE(Gated(GetPod("llama-0"))) << "no node holds the revision yet";

  WriteCacheStatus(
      staging_node,
      json::array(
          {{{"digest", digest}, {"state", "Staging"}, {"bytesDone", 2000}, {"bytesTotal", 4196}}}));
  ASSERT_TRUE(WaitUntil([&] { return HasEventContaining("llama-0", "staging 40%"); }, kWait))
      << ::testing::PrintToString(EventNotes("llama-0"));
  EXPECT_TRUE(Gated(GetPod("llama-0")));

  ReportReady(staging_node, digest);
  ASSERT_TRUE(WaitUntil([&] { return !Gated(GetPod("llama-0")); }, kWait));
  const json pod = GetPod("llama-0");
  const json& terms = pod["spec"]["affinity"]["nodeAffinity"]
                         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 1u) << pod["spec"].dump();
  EXPECT_EQ(terms[0]["matchFields"][0]["values"], json::array({staging_node}));
  // The same patch tells its containers which weights they run (MODELPLANE_REVISION_DIGEST).
  EXPECT_EQ(pod["metadata"]["annotations"].value("modelplane.io/revision-digest", ""), digest);
  // kube-scheduler binds it there, the node whose ModelCache says Ready.
  ASSERT_TRUE(
      WaitUntil([&] { return GetPod("llama-0")["spec"].value("nodeName", "") != ""; }, kWait));
  EXPECT_EQ(GetPod("llama-0")["spec"]["nodeName"], staging_node);
  // The Event is written after the ungating patch; kube-scheduler may bind the pod first.
  EXPECT_TRUE(
      WaitUntil([&] { return HasEventContaining("llama-0", "scheduling gate removed"); }, kWait))
      << ::testing::PrintToString(EventNotes("llama-0"));
}

TEST_F(PodGatesTest, APodWaitsForARevisionCreatedAfterIt) {
  ASSERT_TRUE(client_->Create(core::resources::Pods(), namespace_,
                              GatedPod(namespace_, "early-0", "later-r1")));
  ASSERT_TRUE(WaitUntil([&] { return HasEventContaining("early-0", "does not exist yet"); }, kWait))
      << ::testing::PrintToString(EventNotes("early-0"));
  EXPECT_TRUE(Gated(GetPod("early-0")));

  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "later-r1", 0)));
  const std::string digest = DigestOf("later-r1");
  std::string staging_node;
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto entries = Entries("later-r1");
        if (entries.empty()) return false;
        staging_node = entries.begin()->first;
        return true;
      },
      kWait));
  ReportReady(staging_node, digest);
  ASSERT_TRUE(
      WaitUntil([&] { return GetPod("early-0")["spec"].value("nodeName", "") != ""; }, kWait));
  EXPECT_EQ(GetPod("early-0")["spec"]["nodeName"], staging_node);
}

TEST_F(PodGatesTest, AFullNodeThatHoldsTheRevisionIsNotATarget) {
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "llama-r1", 0)));
  const std::string digest = DigestOf("llama-r1");
  // gpu-node-0 and gpu-node-1 hold it; every GPU of gpu-node-0 is taken by another pod.
  ReportReady("gpu-node-0", digest);
  ReportReady("gpu-node-1", digest);
  json hog = GatedPod(namespace_, "hog", "none");
  hog["metadata"]["annotations"] = json::object();
  hog["spec"].erase("schedulingGates");
  hog["spec"].erase("readinessGates");
  hog["spec"]["nodeName"] = "gpu-node-0";
  auto node = client_->Get(core::resources::Nodes(), "", "gpu-node-0");
  ASSERT_TRUE(node);
  hog["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] =
      (*node)["status"]["allocatable"]["nvidia.com/gpu"];
  ASSERT_TRUE(client_->Create(core::resources::Pods(), namespace_, hog));

  ASSERT_TRUE(client_->Create(core::resources::Pods(), namespace_,
                              GatedPod(namespace_, "llama-0", "llama-r1")));
  ASSERT_TRUE(WaitUntil([&] { return !Gated(GetPod("llama-0")); }, kWait));
  const json terms =
      GetPod("llama-0")["spec"]["affinity"]["nodeAffinity"]
                       ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 1u) << terms.dump();
  EXPECT_EQ(terms[0]["matchFields"][0]["values"], json::array({"gpu-node-1"}));
  ASSERT_TRUE(
      WaitUntil([&] { return GetPod("llama-0")["spec"].value("nodeName", "") != ""; }, kWait));
  EXPECT_EQ(GetPod("llama-0")["spec"]["nodeName"], "gpu-node-1");
}

TEST_F(PodGatesTest, OnePodPerHostLandsOnlyWhereItsRevisionIsReady) {
  // Three pods that must not share a node, a revision Ready on two: two pods go there and the
  // third waits for a third node to stage it, however kube-scheduler picks among the first two.
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "llama-r1", 0)));
  const std::string digest = DigestOf("llama-r1");
  ReportReady("gpu-node-0", digest);
  ReportReady("gpu-node-1", digest);
  const json anti =
      json::parse(R"({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchLabels": {"app": "llama"}}, "topologyKey": "kubernetes.io/hostname"}]}})");
  for (const char* name : {"llama-0", "llama-1", "llama-2"}) {
    json pod = GatedPod(namespace_, name, "llama-r1");
    pod["spec"]["affinity"] = anti;
    ASSERT_TRUE(client_->Create(core::resources::Pods(), namespace_, pod));
  }
  const auto bound_nodes = [&] {
    std::map<std::string, std::string> nodes;
    for (const char* name : {"llama-0", "llama-1", "llama-2"}) {
      const std::string node = GetPod(name)["spec"].value("nodeName", "");
      if (!node.empty()) nodes[name] = node;
    }
    return nodes;
  };
  ASSERT_TRUE(WaitUntil([&] { return bound_nodes().size() == 2; }, kWait));
  std::string waiting;
  for (const char* name : {"llama-0", "llama-1", "llama-2"}) {
    if (!bound_nodes().contains(name)) waiting = name;
  }
  // The third pod is told it waits for a node to stage the revision; the pass that told it has
  // returned, with every pass begun before it: had one let the pod go, its gate would be gone.
  ASSERT_TRUE(WaitUntil([&] { return HasEventContaining(waiting, "staging queued"); }, kWait))
      << ::testing::PrintToString(EventNotes(waiting));
  ASSERT_TRUE(WaitForRevisionPasses());
  auto placed = bound_nodes();
  ASSERT_EQ(placed.size(), 2u);
  std::set<std::string> used;
  for (const auto& [pod, node] : placed) used.insert(node);
  EXPECT_EQ(used, (std::set<std::string>{"gpu-node-0", "gpu-node-1"}));
  EXPECT_FALSE(placed.contains(waiting));
  EXPECT_TRUE(Gated(GetPod(waiting))) << "the third pod must wait for a third copy";
  std::string staging_node;
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (const auto& [node, reason] : Entries("llama-r1")) {
          if (node != "gpu-node-0" && node != "gpu-node-1") staging_node = node;
        }
        return !staging_node.empty();
      },
      kWait));
  ReportReady(staging_node, digest);
  ASSERT_TRUE(WaitUntil([&] { return bound_nodes().size() == 3; }, kWait));
  EXPECT_EQ(bound_nodes()[waiting], staging_node);
}

TEST_F(PodGatesTest, PodsAreNarrowedToAtMostAHundredOfTheNodesThatHoldTheirRevision) {
  // 120 nodes hold the revision Ready, 40 per zone. Two pods wait for the revision to exist, so
  // that one pass lets both go: each is narrowed to 100 nodes, zones in turn and then names, the
  // second to the 20 nodes the first did not get before any the first did; kube-scheduler binds
  // each within its own nodes.
  const auto by_zone = AddNodes(120);
  ASSERT_FALSE(HasFailure());
  // The digest of the spec both revisions share, as the operator computes it.
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "wide-probe", 0)));
  const std::string digest = DigestOf("wide-probe");
  ASSERT_FALSE(digest.empty());
  std::set<std::string> all;
  for (const auto& [zone, nodes] : by_zone) {
    for (const std::string& node : nodes) {
      // wide-r1 does not exist yet: its proof stands for the staging that will have read it.
      ReportReady(node, digest, {"wide-probe", "wide-r1"});
      all.insert(node);
    }
  }
  for (const char* name : {"wide-0", "wide-1"}) {
    json pod = GatedPod(namespace_, name, "wide-r1");
    pod["spec"]["nodeSelector"] = {{"type", "kwok-wide"}};
    ASSERT_TRUE(client_->Create(core::resources::Pods(), namespace_, pod));
  }
  for (const char* name : {"wide-0", "wide-1"}) {
    ASSERT_TRUE(WaitUntil([&] { return HasEventContaining(name, "does not exist yet"); }, kWait))
        << ::testing::PrintToString(EventNotes(name));
  }
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "wide-r1", 0)));
  ASSERT_TRUE(
      WaitUntil([&] { return !Gated(GetPod("wide-0")) && !Gated(GetPod("wide-1")); }, kWait));

  // Zones in turn: 33 of every zone, and a 34th of the first zone by name.
  std::set<std::string> first_choice;
  for (const auto& [zone, nodes] : by_zone) {
    const std::size_t taken = zone == by_zone.begin()->first ? 34 : 33;
    first_choice.insert(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(taken));
  }
  std::set<std::string> left_out;
  std::ranges::set_difference(all, first_choice, std::inserter(left_out, left_out.end()));
  const std::set<std::string> narrowed_0 = NarrowedTo("wide-0");
  const std::set<std::string> narrowed_1 = NarrowedTo("wide-1");
  ASSERT_EQ(narrowed_0.size(), 100u);
  ASSERT_EQ(narrowed_1.size(), 100u);
  // Which pod the planner took first depends on creation times within the same second.
  const bool zero_first = narrowed_0 == first_choice;
  const std::set<std::string>& second = zero_first ? narrowed_1 : narrowed_0;
  EXPECT_EQ(zero_first ? narrowed_0 : narrowed_1, first_choice);
  EXPECT_TRUE(std::ranges::includes(second, left_out))
      << "the second pod must get the nodes the first did not";
  for (const char* name : {"wide-0", "wide-1"}) {
    ASSERT_TRUE(WaitUntil([&] { return GetPod(name)["spec"].value("nodeName", "") != ""; }, kWait));
    EXPECT_TRUE(NarrowedTo(name).contains(GetPod(name)["spec"]["nodeName"].get<std::string>()));
    EXPECT_TRUE(WaitUntil(
        [&] {
          return HasEventContaining(name,
                                    "and 95 more (narrowed to 100 of the 120 nodes that hold "
                                    "it and can take this pod)");
        },
        kWait))
        << ::testing::PrintToString(EventNotes(name));
  }
}

}  // namespace
}  // namespace modelplane::controller
