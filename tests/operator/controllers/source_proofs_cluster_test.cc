// The operator's side of "bytes shared across namespaces only with proof" (docs/security.md),
// in-process against the real API server and KWOK nodes of e2e/cluster.sh, the agents' reports
// written as they would write them. A copy of a revision (the same files, so the same digest)
// held Ready on a node for the original is not Ready there for the copy: the node reads as
// Staging while no node proved the copy's own sources, as Failed with the node's reason when
// its proof failed, and Ready once a node proved them, when the operator also tells the holder
// (`sourcesProven` on the copy's entry) so that its agent may serve the bytes.
#include "tests/operator/controllers/controllers_fixture.h"

namespace modelplane::controller {
namespace {

using cluster_testing::ControllersTest;
using cluster_testing::kWait;
using cluster_testing::Revision;
using core::testing::WaitUntil;
using nlohmann::json;

json Proof(const std::string& ns, const std::string& name, const std::string& state,
           const std::string& reason = "") {
  json proof = {{"revision", {{"namespace", ns}, {"name", name}}}, {"state", state}};
  if (!reason.empty()) {
    proof["reason"] = reason;
    proof["message"] = "the revision's own sources did not serve the bytes its files name";
  }
  return proof;
}

TEST_F(ControllersTest, ACopyIsReadyWhereItsDigestIsHeldOnlyOnceItsOwnSourcesAreProven) {
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "original", 1)));
  ASSERT_TRUE(WaitUntil([&] { return CachesListing("original").size() == 1; }, kWait));
  std::string digest;
  ASSERT_TRUE(WaitUntil(
      [&] {
        digest = RevisionStatus("original").value("digest", "");
        return !digest.empty();
      },
      kWait));
  const std::string holder = *CachesListing("original").begin();
  const auto report = [&](json proofs) {
    WriteCacheStatus(holder, json::array({{{"digest", digest},
                                           {"state", "Ready"},
                                           {"bytesDone", 4196},
                                           {"bytesTotal", 4196},
                                           {"sourceTier", "objectStore"},
                                           {"sourceProofs", std::move(proofs)}}}));
  };
  report(json::array({Proof(namespace_, "original", "Proven")}));
  ASSERT_TRUE(
      WaitUntil([&] { return RevisionStatus("original").value("readyNodes", 0) == 1; }, kWait))
      << RevisionStatus("original").dump();

  // The copy: the same spec under another name, prestaged on the holder and nowhere else.
  json copy = Revision(namespace_, "copy", 1);
  copy["spec"]["prestage"]["nodeSelector"] = {{"kubernetes.io/hostname", holder}};
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_, copy));
  ASSERT_TRUE(
      WaitUntil([&] { return CachesListing("copy") == std::set<std::string>{holder}; }, kWait));
  const auto copy_entry = [&]() -> json {
    auto cache = client_->Get(core::resources::ModelCaches(), "", holder);
    if (!cache) return json();
    for (const json& entry : (*cache)["spec"].value("revisions", json::array())) {
      if (entry["revision"].value("name", "") == "copy" &&
          entry["revision"].value("namespace", "") == namespace_) {
        return entry;
      }
    }
    return json();
  };
  ASSERT_TRUE(WaitUntil(
      [&] {
        const json status = RevisionStatus("copy");
        return status.value("digest", "") == digest && status.value("stagingNodes", 0) == 1;
      },
      kWait))
      << RevisionStatus("copy").dump();
  EXPECT_EQ(RevisionStatus("copy").value("readyNodes", -1), 0)
      << "held for the original, not yet for the copy";
  EXPECT_FALSE(copy_entry().value("sourcesProven", false));

  // The holder's check of the copy's own source failed: Failed, with the node's reason.
  report(json::array({Proof(namespace_, "original", "Proven"),
                      Proof(namespace_, "copy", "Failed", "PossessionNotProven")}));
  ASSERT_TRUE(WaitUntil([&] { return RevisionStatus("copy").value("failedNodes", 0) == 1; }, kWait))
      << RevisionStatus("copy").dump();
  EXPECT_NE(RevisionStatus("copy").dump().find("did not serve the bytes its files name"),
            std::string::npos)
      << RevisionStatus("copy").dump();
  EXPECT_EQ(RevisionStatus("original").value("readyNodes", 0), 1) << "the original is untouched";

  // Proven: Ready, and the holder's agent hears it may serve the copy from what it holds.
  report(
      json::array({Proof(namespace_, "original", "Proven"), Proof(namespace_, "copy", "Proven")}));
  ASSERT_TRUE(WaitUntil([&] { return RevisionStatus("copy").value("readyNodes", 0) == 1; }, kWait))
      << RevisionStatus("copy").dump();
  EXPECT_TRUE(WaitUntil([&] { return copy_entry().value("sourcesProven", false); }, kWait))
      << copy_entry().dump();

  for (const char* name : {"copy", "original"}) {
    ASSERT_TRUE(client_->Delete(core::resources::ModelRevisions(), namespace_, name));
  }
  EXPECT_TRUE(WaitUntil(
      [&] { return CachesListing("copy").empty() && CachesListing("original").empty(); }, kWait));
  WriteCacheStatus(holder, json::array());
}

}  // namespace
}  // namespace modelplane::controller
