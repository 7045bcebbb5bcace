// The operator's controllers in-process against the real API server and KWOK nodes of
// e2e/cluster.sh (CRDs applied: `kubectl apply -f crds/`). Each test watches ModelRevisions in
// its own namespace; ModelCaches and Nodes are cluster-wide, as in production. Assertions are on
// the state of the world, polled with bounded waits.
#include "core/api/timestamp.h"
#include "core/digest/file_set_tree.h"
#include "core/pki/peer_ticket.h"
#include "tests/operator/controllers/controllers_fixture.h"

namespace modelplane::controller {
namespace {

using cluster_testing::ControllersTest;
using cluster_testing::kKwokNodes;
using cluster_testing::kWait;
using cluster_testing::KwokNode;
using cluster_testing::Revision;
using core::testing::WaitUntil;
using nlohmann::json;
using std::chrono::seconds;

TEST_F(ControllersTest, EveryNodeGetsAModelCache) {
  for (const std::string_view node_name : kKwokNodes) {
    const std::string node(node_name);
    EXPECT_TRUE(WaitUntil(
        [&] { return client_->Get(core::resources::ModelCaches(), "", node).has_value(); }, kWait))
        << node;
  }
  auto cache = client_->Get(core::resources::ModelCaches(), "", std::string(kKwokNodes[0]));
  auto node = client_->Get(core::resources::Nodes(), "", std::string(kKwokNodes[0]));
  ASSERT_TRUE(cache && node);
  ASSERT_EQ((*cache)["metadata"]["ownerReferences"].size(), 1u);
  EXPECT_EQ((*cache)["metadata"]["ownerReferences"][0]["uid"], (*node)["metadata"]["uid"]);
}

TEST_F(ControllersTest, PrestagesAcrossZonesAndReportsStatusFromTheCaches) {
  const std::string name = "tiny-r1";
  auto created =
      client_->Create(core::resources::ModelRevisions(), namespace_, Revision(namespace_, name, 2));
  ASSERT_TRUE(created) << created.error().ToString();

  // Two ModelCaches get the entry, in different zones.
  ASSERT_TRUE(WaitUntil([&] { return CachesListing(name).size() == 2; }, kWait))
      << "caches listing it: " << CachesListing(name).size();
  const std::set<std::string> chosen = CachesListing(name);
  std::set<std::string> zones;
  for (const std::string& node : chosen) zones.insert(ZoneOf(node));
  EXPECT_EQ(zones.size(), 2u) << "both copies in one zone";

  // The digest is the one core/api computes for the spec the server stored, and the entry
  // carries it.
  auto stored = api::ModelRevisionFromJson(GetRevision(name));
  ASSERT_TRUE(stored) << stored.error().ToString();
  auto digest = api::ComputeRevisionDigest(stored->spec);
  ASSERT_TRUE(digest);
  ASSERT_TRUE(WaitUntil(
      [&] {
        const json revision = GetRevision(name);
        return revision.contains("status") && revision["status"].value("digest", "") == *digest &&
               revision["status"].value("desiredNodes", 0) == 2 &&
               revision["status"].value("phase", "") == "Pending";
      },
      kWait))
      << GetRevision(name).dump();
  const json revision = GetRevision(name);
  EXPECT_EQ(revision["status"]["totalBytes"], 4196);
  EXPECT_EQ(revision["status"]["observedGeneration"], revision["metadata"]["generation"]);
  EXPECT_EQ(revision["metadata"]["finalizers"], json::array({kCacheEntriesFinalizer}));

  // The agents report: one node staging, then both ready from different tiers.
  const auto node_a = *chosen.begin();
  const auto node_b = *std::next(chosen.begin());
  WriteCacheStatus(node_a, json::array({{{"digest", *digest},
                                         {"state", "Staging"},
                                         {"bytesDone", 1000},
                                         {"bytesTotal", 4196},
                                         {"sourceTier", "objectStore"}}}));
  ASSERT_TRUE(WaitUntil(
      [&] {
        const json status = RevisionStatus(name);
        return status.value("phase", "") == "Staging" && status.value("stagingNodes", 0) == 1;
      },
      kWait))
      << RevisionStatus(name).dump();

  WriteCacheStatus(node_a, json::array({{{"digest", *digest},
                                         {"state", "Ready"},
                                         {"sourceTier", "objectStore"},
                                         {"timestamps",
                                          {{"queued", "2026-11-29T10:00:00Z"},
                                           {"published", "2026-11-29T10:00:06.500Z"}}}}}));
  WriteCacheStatus(node_b, json::array({{{"digest", *digest},
                                         {"state", "Ready"},
                                         {"sourceTier", "peer"},
                                         {"timestamps",
                                          {{"queued", "2026-11-29T10:00:01Z"},
                                           {"published", "2026-11-29T10:00:03Z"}}}}}));
  ASSERT_TRUE(WaitUntil(
      [&] {
        const json status = RevisionStatus(name);
        return status.value("phase", "") == "Ready" && status.value("readyNodes", 0) == 2;
      },
      kWait))
      << RevisionStatus(name).dump();
  const json status = RevisionStatus(name);
  EXPECT_EQ(status["stagingNodes"], 0);
  EXPECT_EQ(status["failedNodes"], 0);
  EXPECT_DOUBLE_EQ(status["bytesToReadySeconds"]["p50"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(status["bytesToReadySeconds"]["p95"].get<double>(), 6.5);
  EXPECT_DOUBLE_EQ(status["bytesToReadySeconds"]["p99"].get<double>(), 6.5);
  std::map<std::string, std::string> tiers;
  for (const json& node : status["nodes"]) tiers[node["node"]] = node.value("tier", "");
  EXPECT_EQ(tiers, (std::map<std::string, std::string>{{node_a, "objectStore"}, {node_b, "peer"}}));
  bool ready_true = false;
  for (const json& condition : status["conditions"]) {
    ready_true = ready_true || (condition["type"] == "Ready" && condition["status"] == "True");
  }
  EXPECT_TRUE(ready_true) << status.dump();

  // Deleting the revision removes its entries everywhere, then the finalizer lets it go.
  ASSERT_TRUE(client_->Delete(core::resources::ModelRevisions(), namespace_, name));
  EXPECT_TRUE(WaitUntil(
      [&] {
        return CachesListing(name).empty() &&
               !client_->Get(core::resources::ModelRevisions(), namespace_, name).has_value();
      },
      kWait));
  for (const std::string& node : chosen) WriteCacheStatus(node, json::array());
}

TEST_F(ControllersTest, ShrinkingKeepsTheReadyCopyAndRevokingRemovesEveryEntry) {
  const std::string name = "tiny-r2";
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, name, 3)));
  ASSERT_TRUE(WaitUntil([&] { return CachesListing(name).size() == 3; }, kWait));
  // The last of the three by name holds it ready: shrinking to one must keep exactly that one,
  // although name order alone would keep the first.
  const std::string ready_node = *CachesListing(name).rbegin();
  std::string digest;
  ASSERT_TRUE(WaitUntil(
      [&] {
        digest = RevisionStatus(name).value("digest", "");
        return !digest.empty();
      },
      kWait));
  WriteCacheStatus(ready_node, json::array({{{"digest", digest},
                                             {"state", "Ready"},
                                             {"sourceTier", "peer"},
                                             {"timestamps",
                                              {{"queued", "2026-11-29T10:00:00Z"},
                                               {"published", "2026-11-29T10:00:01Z"}}}}}));
  ASSERT_TRUE(WaitUntil([&] { return RevisionStatus(name).value("readyNodes", 0) == 1; }, kWait));
  ASSERT_TRUE(client_->Patch(core::resources::ModelRevisions(), namespace_, name,
                             core::PatchType::kMerge, {{"spec", {{"prestage", {{"nodes", 1}}}}}}));
  EXPECT_TRUE(
      WaitUntil([&] { return CachesListing(name) == std::set<std::string>{ready_node}; }, kWait))
      << CachesListing(name).size();
  EXPECT_TRUE(WaitUntil(
      [&] {
        const json status = RevisionStatus(name);
        return status.value("phase", "") == "Ready" && status.value("desiredNodes", 0) == 1;
      },
      kWait))
      << RevisionStatus(name).dump();

  ASSERT_TRUE(client_->Patch(core::resources::ModelRevisions(), namespace_, name,
                             core::PatchType::kMerge, {{"spec", {{"revoked", true}}}}));
  EXPECT_TRUE(WaitUntil(
      [&] {
        return CachesListing(name).empty() && RevisionStatus(name).value("phase", "") == "Revoked";
      },
      kWait))
      << RevisionStatus(name).dump();
  // The purge: the node still holds its bytes (the agent says Evicting, reason Revoked) until
  // it reports them gone.
  auto purge_condition = [&] {
    for (const json& condition : RevisionStatus(name).value("conditions", json::array())) {
      if (condition["type"] == "Purged") return condition.value("status", "");
    }
    return std::string();
  };
  EXPECT_TRUE(WaitUntil(
      [&] {
        const json purge = RevisionStatus(name).value("purge", json::object());
        return purge.value("nodesHolding", -1) == 1 &&
               purge.value("nodes", json::array()) == json::array({ready_node}) &&
               purge_condition() == "False";
      },
      kWait))
      << RevisionStatus(name).dump();
  WriteCacheStatus(ready_node, json::array({{{"digest", digest},
                                             {"state", "Evicting"},
                                             {"reason", "Revoked"},
                                             {"bytesDone", 1000},
                                             {"bytesTotal", 4196}}}));
  EXPECT_TRUE(WaitUntil(
      [&] {
        return RevisionStatus(name).value("purge", json::object()).value("bytesHeld", 0) == 1000;
      },
      kWait))
      << RevisionStatus(name).dump();
  WriteCacheStatus(ready_node, json::array());
  EXPECT_TRUE(WaitUntil(
      [&] {
        return RevisionStatus(name).value("purge", json::object()).value("nodesHolding", -1) == 0 &&
               purge_condition() == "True";
      },
      kWait))
      << RevisionStatus(name).dump();
}

// Fleet scale: agents read no other node's status, so the operator tells each node whom to read
// a revision from (its entry's peers) and what the fleet knows of what it holds (holdings).
TEST_F(ControllersTest, EntriesNamePeersAndHoldingsSayWhereElseADigestIsAndWhetherItIsRevoked) {
  const std::string name = "tiny-peers";
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, name, 3)));
  ASSERT_TRUE(WaitUntil([&] { return CachesListing(name).size() == 3; }, kWait));
  std::string digest;
  ASSERT_TRUE(WaitUntil(
      [&] {
        digest = RevisionStatus(name).value("digest", "");
        return !digest.empty();
      },
      kWait));
  const std::set<std::string> chosen = CachesListing(name);
  const std::string holder = *chosen.begin();
  auto reported = client_->Patch(
      core::resources::ModelCaches(), "", holder, core::PatchType::kMerge,
      {{"status",
        {{"capacityBytes", 1LL << 40},
         {"peerEndpoint", "127.0.0.7:7443"},
         {"zone", ZoneOf(holder)},
         {"revisions",
          ::modelplane::testing::WithOwnSourceProofs(
              *client_, namespace_, json::array({{{"digest", digest}, {"state", "Ready"}}}))}}}},
      {.subresource = "status"});
  ASSERT_TRUE(reported) << reported.error().ToString();
  reported_caches_.insert(holder);

  const auto cache_spec = [&](const std::string& node) {
    auto cache = client_->Get(core::resources::ModelCaches(), "", node);
    return cache ? cache->value("spec", json::object()) : json::object();
  };
  const auto entry_of = [&](const std::string& node) {
    for (const json& entry : cache_spec(node).value("revisions", json::array())) {
      if (entry["revision"].value("name", "") == name) return entry;
    }
    return json::object();
  };
  for (const std::string& node : chosen) {
    if (node == holder) continue;
    EXPECT_TRUE(WaitUntil(
        [&] {
          const json peers = entry_of(node).value("peers", json::array());
          return peers.size() == 1 && peers[0].value("node", "") == holder &&
                 peers[0].value("endpoint", "") == "127.0.0.7:7443" &&
                 peers[0].value("state", "") == "Ready";
        },
        kWait))
        << node << ": " << entry_of(node).dump();
    // Beside its peers, the operator's ticket: signed with the peer CA, for this node and the
    // revision's files, so the holder serves it exactly them (docs/peer.md, "Peer scope").
    const std::string ticket = entry_of(node).value("peerTicket", "");
    auto verifier = core::StatementVerifier::FromCertificatePem(peer_ca_certificate_);
    ASSERT_TRUE(verifier);
    auto read = core::ReadPeerTicket(*verifier, ticket);
    ASSERT_TRUE(read) << node << ": " << read.error().ToString();
    EXPECT_EQ(read->node, node);
    const std::array files{*core::ParseDigest("sha256:" + std::string(64, '1')),
                           *core::ParseDigest("sha256:" + std::string(64, '2'))};
    EXPECT_EQ(read->files_root, core::FileSetTree::Of(files).root());
    EXPECT_GT(read->expires, std::chrono::system_clock::now() + std::chrono::minutes(50));
  }
  EXPECT_FALSE(entry_of(holder).contains("peers")) << "the holder reads from no one";
  EXPECT_FALSE(entry_of(holder).contains("peerTicket"));
  // Later passes keep a ticket that has most of its life left: no write per pass.
  std::map<std::string, std::string> tickets;
  for (const std::string& node : chosen) tickets[node] = entry_of(node).value("peerTicket", "");
  const std::uint64_t passes = RevisionPassesReturned();
  ASSERT_TRUE(client_->Patch(core::resources::ModelRevisions(), namespace_, name,
                             core::PatchType::kMerge,
                             {{"metadata", {{"labels", {{"pass", "again"}}}}}}));
  ASSERT_TRUE(WaitUntil([&] { return RevisionPassesReturned() > passes; }, kWait));
  for (const std::string& node : chosen) {
    EXPECT_EQ(entry_of(node).value("peerTicket", ""), tickets[node]) << node;
  }

  const auto holding = [&] {
    for (const json& item : cache_spec(holder).value("holdings", json::array())) {
      if (item.value("digest", "") == digest) return item;
    }
    return json();
  };
  ASSERT_TRUE(WaitUntil([&] { return holding().is_object(); }, kWait)) << cache_spec(holder).dump();
  EXPECT_FALSE(holding().value("revoked", true));
  EXPECT_FALSE(holding().value("peerInZone", true)) << "the only copy";
  EXPECT_GE(cache_spec(holder).value("progressIntervalSeconds", 0), 1);

  ASSERT_TRUE(client_->Patch(core::resources::ModelRevisions(), namespace_, name,
                             core::PatchType::kMerge, {{"spec", {{"revoked", true}}}}));
  EXPECT_TRUE(WaitUntil([&] { return holding().value("revoked", false); }, kWait))
      << cache_spec(holder).dump();
}

// Revocation by digest: a ModelRevocation of the weights file's sha256 covers every revision
// that has that file, whatever else differs (here the engine version, so the revision digests
// differ), and nothing else; its status counts them; deleting it lifts the revocation.
TEST_F(ControllersTest, ARevocationByDigestCoversEveryRevisionWithThatDigest) {
  json other_engine = Revision(namespace_, "tiny-engine2", 1);
  other_engine["spec"]["engine"]["version"] = "0.7.0";
  json other_files = Revision(namespace_, "other-files", 1);
  other_files["spec"]["files"][0]["sha256"] = "sha256:" + std::string(64, '3');
  for (const json& revision : {Revision(namespace_, "tiny", 1), other_engine, other_files}) {
    ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_, revision));
  }
  ASSERT_TRUE(WaitUntil([&] { return CachesListing("tiny").size() == 1; }, kWait));
  const std::string revocation_name = namespace_ + "-weights";
  ASSERT_TRUE(client_->Create(
      core::resources::ModelRevocations(), "",
      {{"apiVersion", "modelplane.io/v1alpha1"},
       {"kind", "ModelRevocation"},
       {"metadata", {{"name", revocation_name}}},
       {"spec", {{"digest", "sha256:" + std::string(64, '1')}, {"reason", "poisoned shard"}}}}));
  const auto revoked_by = [&](const std::string& name) {
    return RevisionStatus(name).value("revokedBy", json::object()).value("name", "");
  };
  for (const std::string name : {"tiny", "tiny-engine2"}) {
    EXPECT_TRUE(WaitUntil(
        [&] {
          return revoked_by(name) == revocation_name &&
                 RevisionStatus(name).value("phase", "") == "Revoked" &&
                 CachesListing(name).empty();
        },
        kWait))
        << name << ": " << RevisionStatus(name).dump();
  }
  EXPECT_EQ(GetRevision("tiny")["status"]["revokedBy"].value("reason", ""), "poisoned shard");
  EXPECT_EQ(revoked_by("other-files"), "");
  EXPECT_EQ(CachesListing("other-files").size(), 1U);
  const auto revocation_status = [&] {
    auto revocation = client_->Get(core::resources::ModelRevocations(), "", revocation_name);
    return revocation ? revocation->value("status", json::object()) : json::object();
  };
  EXPECT_TRUE(WaitUntil(
      [&] {
        const json status = revocation_status();
        return status.value("revisions", 0) == 2 && status.value("phase", "") == "Purged";
      },
      kWait))
      << revocation_status().dump();

  ASSERT_TRUE(client_->Delete(core::resources::ModelRevocations(), "", revocation_name));
  EXPECT_TRUE(WaitUntil(
      [&] {
        return revoked_by("tiny").empty() &&
               RevisionStatus("tiny").value("phase", "") != "Revoked" &&
               CachesListing("tiny").size() == 1;
      },
      kWait))
      << RevisionStatus("tiny").dump();
}

TEST_F(ControllersTest, CordonedNodesGetNoNewCopies) {
  // Cordon one node in each zone: the two copies go to the other two, one per zone.
  const std::vector<std::string> cordoned = {"gpu-node-0", "gpu-node-1"};
  auto cordon = [&](bool value) {
    for (const std::string& node : cordoned) {
      ASSERT_TRUE(client_->Patch(core::resources::Nodes(), "", node, core::PatchType::kMerge,
                                 {{"spec", {{"unschedulable", value}}}}));
    }
  };
  cordon(true);
  // Uncordoned whatever happens: the nodes are shared with every other cluster test.
  struct Uncordon {
    std::function<void()> undo;
    ~Uncordon() { undo(); }
  } uncordon{[&] { cordon(false); }};
  const std::string name = "tiny-r3";
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, name, 2)));
  EXPECT_TRUE(WaitUntil(
      [&] {
        return CachesListing(name) == std::set<std::string>{"gpu-node-2", "gpu-node-3"};
      },
      kWait))
      << CachesListing(name).size();
}

TEST_F(ControllersTest, InvalidSpecIsReportedOnceWithoutRetrying) {
  const std::string name = "escapes";
  json revision = Revision(namespace_, name, 2);
  // The CRD only requires a leading '/': the operator's own validation catches the traversal.
  revision["spec"]["sources"] = json::array({{{"name", "nfs"},
                                              {"type", "sharedFilesystem"},
                                              {"sharedFilesystem", {{"path", "/models/../etc"}}}}});
  auto created = client_->Create(core::resources::ModelRevisions(), namespace_, revision);
  ASSERT_TRUE(created) << created.error().ToString();

  json valid;
  ASSERT_TRUE(WaitUntil(
      [&] {
        const json r = GetRevision(name);
        if (!r.contains("status") || r["status"].value("phase", "") != "Invalid") return false;
        for (const json& condition : r["status"]["conditions"]) {
          if (condition["type"] == "Valid") valid = condition;
        }
        return true;
      },
      kWait))
      << GetRevision(name).dump();
  EXPECT_EQ(valid["status"], "False");
  EXPECT_EQ(valid["reason"], "InvalidSpec");
  EXPECT_NE(valid["message"].get<std::string>().find("UnsafePath"), std::string::npos)
      << valid.dump();
  EXPECT_FALSE(RevisionStatus(name).contains("digest"));

  // One Warning Event about it.
  const auto warnings = [&] {
    auto events = client_->ListAll(core::resources::Events(), namespace_, {});
    if (!events) return -1;
    int found = 0;
    for (const json& event : events->items) {
      found += event.value("reason", "") == "InvalidSpec" && event.value("type", "") == "Warning" &&
               event["regarding"].value("name", "") == name;
    }
    return found;
  };
  ASSERT_TRUE(WaitUntil([&] { return warnings() == 1; }, kWait)) << warnings();

  // No node is asked for it, and the object settles: no status rewritten pass after pass (each
  // write would wake the next pass). A change the controller does not act on (an annotation)
  // makes it look again; once that pass has returned, the status is as it was, and still one
  // Event tells of it. Conditions carry whole seconds, so the pass comes in a later second than
  // the status: one that would write a new transition time, were the old one not kept.
  EXPECT_TRUE(CachesListing(name).empty());
  const std::string written_at = valid.value("lastTransitionTime", "");
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto second = std::chrono::floor<seconds>(std::chrono::system_clock::now());
        return core::api::FormatTimestamp(second) > written_at;
      },
      kWait))
      << written_at;
  const std::uint64_t begun = manager_->revision_stats().reconciles;
  auto touched =
      client_->Patch(core::resources::ModelRevisions(), namespace_, name, core::PatchType::kMerge,
                     {{"metadata", {{"annotations", {{"modelplane.io/test-touched", "true"}}}}}});
  ASSERT_TRUE(touched) << touched.error().ToString();
  const std::string version = (*touched)["metadata"]["resourceVersion"];
  ASSERT_TRUE(WaitUntil([&] { return manager_->revision_stats().reconciles > begun; }, kWait))
      << "the change woke no pass";
  ASSERT_TRUE(WaitForRevisionPasses());
  EXPECT_EQ(GetRevision(name)["metadata"]["resourceVersion"], version)
      << RevisionStatus(name).dump();
  EXPECT_EQ(warnings(), 1);
}

TEST_F(ControllersTest, ANodeGetsItsCacheAndLosesItWhenRemoved) {
  const std::string node = "mp-operator-node-" + std::to_string(::getpid());
  auto created = client_->Create(
      core::resources::Nodes(), "",
      KwokNode(node, {{"type", "operator-test"}, {std::string(kZoneLabel), "zone-c"}}));
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto cache = client_->Get(core::resources::ModelCaches(), "", node);
        return cache &&
               (*cache)["metadata"]["ownerReferences"][0]["uid"] == (*created)["metadata"]["uid"];
      },
      kWait));

  ASSERT_TRUE(client_->Delete(core::resources::Nodes(), "", node));
  EXPECT_TRUE(WaitUntil(
      [&] { return !client_->Get(core::resources::ModelCaches(), "", node).has_value(); }, kWait));
}

// A Node being deleted (held here by a finalizer of the test's own, as the orphan finalizer holds
// one during `kubectl delete node --cascade=orphan`) loses its cache at once: the operator deletes
// it rather than keep or adopt it for an owner that is about to go.
TEST_F(ControllersTest, ANodeBeingDeletedLosesItsCacheWhileItIsStillThere) {
  const std::string node = "mp-operator-deleting-" + std::to_string(::getpid());
  json object = KwokNode(node, {{"type", "operator-test"}});
  object["metadata"]["finalizers"] = json::array({"modelplane.io/test-hold"});
  ASSERT_TRUE(client_->Create(core::resources::Nodes(), "", object));
  EXPECT_TRUE(WaitUntil(
      [&] { return client_->Get(core::resources::ModelCaches(), "", node).has_value(); }, kWait));
  ASSERT_TRUE(client_->Delete(core::resources::Nodes(), "", node));
  EXPECT_TRUE(WaitUntil(
      [&] { return !client_->Get(core::resources::ModelCaches(), "", node).has_value(); }, kWait));
  auto held = client_->Get(core::resources::Nodes(), "", node);
  ASSERT_TRUE(held) << held.error().ToString();
  EXPECT_TRUE(held->at("metadata").contains("deletionTimestamp"));
  ASSERT_TRUE(client_->Patch(core::resources::Nodes(), "", node, core::PatchType::kMerge,
                             {{"metadata", {{"finalizers", nullptr}}}}));
}

// An agent that starts before the operator makes its node's ModelCache itself, with no owner
// (it cannot read the Node's uid); the operator adopts it, so the garbage collector removes it
// with the Node.
TEST_F(ControllersTest, ACacheItsAgentMadeIsAdoptedByItsNode) {
  const std::string node = "mp-operator-adopt-" + std::to_string(::getpid());
  ASSERT_TRUE(client_->Create(core::resources::ModelCaches(), "",
                              {{"apiVersion", "modelplane.io/v1alpha1"},
                               {"kind", "ModelCache"},
                               {"metadata", {{"name", node}}},
                               {"spec", {{"revisions", json::array()}}}}));
  auto created =
      client_->Create(core::resources::Nodes(), "", KwokNode(node, {{"type", "operator-test"}}));
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto cache = client_->Get(core::resources::ModelCaches(), "", node);
        return cache && cache->at("metadata").contains("ownerReferences") &&
               (*cache)["metadata"]["ownerReferences"][0]["uid"] == (*created)["metadata"]["uid"];
      },
      kWait));
  ASSERT_TRUE(client_->Delete(core::resources::Nodes(), "", node));
  EXPECT_TRUE(WaitUntil(
      [&] { return !client_->Get(core::resources::ModelCaches(), "", node).has_value(); }, kWait));
}

TEST_F(ControllersTest, EntriesOfARevisionThatIsGoneArePruned) {
  // An entry whose revision does not exist (deleted while no operator ran, finalizer removed
  // by hand) is dropped from the cache; entries of other revisions stay.
  const std::string cache(kKwokNodes[3]);
  ASSERT_TRUE(WaitUntil(
      [&] { return client_->Get(core::resources::ModelCaches(), "", cache).has_value(); }, kWait));
  const std::string digest = "sha256:" + std::string(64, 'f');
  auto patched = client_->Patch(
      core::resources::ModelCaches(), "", cache, core::PatchType::kApply,
      {{"apiVersion", "modelplane.io/v1alpha1"},
       {"kind", "ModelCache"},
       {"metadata", {{"name", cache}}},
       {"spec",
        {{"revisions", json::array({{{"revision", {{"namespace", namespace_}, {"name", "ghost"}}},
                                     {"digest", digest},
                                     {"reason", "prestage"}}})}}}},
      {.field_manager = "someone-by-hand", .force = true});
  ASSERT_TRUE(patched) << patched.error().ToString();
  EXPECT_TRUE(WaitUntil([&] { return CachesListing("ghost").empty(); }, kWait));
}

}  // namespace
}  // namespace modelplane::controller
