// ModelQuotas enforced by the operator's controllers, in-process against the real API server and
// the KWOK nodes of e2e/cluster.sh: prestaged copies beyond a namespace's limit are not written
// (the revision says why in WithinQuota and a Warning Event, naming no node), the quota's status
// shows the namespace's usage and the revisions it cuts, a revision that was cut gets its copies
// once another frees room, a lowered limit cuts on the next pass, and a new leader counts the
// entries already written before it grants anything. (Pins and their time-to-live:
// rollouts_test.cc.)
#include <gmock/gmock.h>

#include "tests/operator/controllers/controllers_fixture.h"

namespace modelplane::controller {
namespace {

using cluster_testing::ControllersTest;
using cluster_testing::kWait;
using cluster_testing::RevisionWithContent;
using core::testing::WaitUntil;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// The fixture's revisions are 4096 + 100 bytes.
constexpr std::int64_t kCopy = 4196;

class QuotaClusterTest : public ControllersTest {
 protected:
  void SetUp() override {
    ControllersTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!CrdInstalled("modelquotas.modelplane.io"))
      GTEST_SKIP() << core::testing::kModelQuotaCrdMissing;
  }

  void SetQuota(const json& spec) {
    const json quota = {{"apiVersion", "modelplane.io/v1alpha1"},
                        {"kind", "ModelQuota"},
                        {"metadata", {{"name", "limits"}, {"namespace", namespace_}}},
                        {"spec", spec}};
    auto applied = client_->Patch(core::resources::ModelQuotas(), namespace_, "limits",
                                  core::PatchType::kApply, quota,
                                  {.field_manager = "quota-test", .force = true});
    ASSERT_TRUE(applied) << applied.error().ToString();
  }

  json QuotaStatus() {
    auto quota = client_->Get(core::resources::ModelQuotas(), namespace_, "limits");
    return quota ? quota->value("status", json::object()) : json::object();
  }

  json WithinQuota(const std::string& revision) {
    for (const json& condition : RevisionStatus(revision).value("conditions", json::array())) {
      if (condition.value("type", "") == "WithinQuota") return condition;
    }
    return json::object();
  }

  int Warnings(const std::string& revision, const std::string& reason) {
    auto events = client_->ListAll(core::resources::Events(), namespace_, {});
    if (!events) return -1;
    int found = 0;
    for (const json& event : events->items) {
      found += event.value("reason", "") == reason && event.value("type", "") == "Warning" &&
               event["regarding"].value("name", "") == revision;
    }
    return found;
  }
};

TEST_F(QuotaClusterTest, PrestagedCopiesBeyondTheNamespacesLimitAreRefusedWithAReason) {
  SetQuota({{"prestagedBytes", 3 * kCopy}});
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "first", 'a', 2)));
  ASSERT_TRUE(WaitUntil([&] { return CachesListing("first").size() == 2; }, kWait));
  ASSERT_TRUE(WaitUntil([&] { return WithinQuota("first").value("status", "") == "True"; }, kWait))
      << RevisionStatus("first").dump();

  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "second", 'b', 2)));
  ASSERT_TRUE(
      WaitUntil([&] { return WithinQuota("second").value("status", "") == "False"; }, kWait))
      << RevisionStatus("second").dump();
  const json refused = WithinQuota("second");
  EXPECT_EQ(refused["reason"], "QuotaExceeded");
  const std::string message = refused.value("message", "");
  EXPECT_THAT(message, HasSubstr("prestaged on 1 of 2 nodes asked: ModelQuota " + namespace_ +
                                 "/limits allows 12.3 KiB of prestaged copies"));
  EXPECT_THAT(message, HasSubstr("other revisions hold 8.2 KiB"));
  for (const char* node : {"gpu-node-0", "gpu-node-1", "gpu-node-2", "gpu-node-3"}) {
    EXPECT_THAT(message, Not(HasSubstr(node))) << "a refusal names no node";
  }
  EXPECT_EQ(CachesListing("second").size(), 1U);
  EXPECT_TRUE(WaitUntil([&] { return Warnings("second", "QuotaExceeded") == 1; }, kWait));
  ASSERT_TRUE(WaitUntil(
      [&] {
        const json status = QuotaStatus();
        return status.contains("used") && status["used"].value("prestagedBytes", 0) == 3 * kCopy &&
               status.value("limitedCount", 0) == 1;
      },
      kWait))
      << QuotaStatus().dump();
  EXPECT_EQ(QuotaStatus()["limitedRevisions"], json::array({"second"}));
  EXPECT_EQ(QuotaStatus()["used"].value("pinnedBytes", -1), 0);

  // A new leader (a restart) counts the entries already written before it grants anything.
  StartManager();
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "third", 'c', 1)));
  ASSERT_TRUE(WaitUntil([&] { return WithinQuota("third").value("status", "") == "False"; }, kWait))
      << RevisionStatus("third").dump();
  EXPECT_THAT(WithinQuota("third").value("message", ""), HasSubstr("prestaged on 0 of 1"));
  EXPECT_EQ(RevisionStatus("third").value("phase", ""), "Pending");
  EXPECT_TRUE(CachesListing("third").empty());
  EXPECT_EQ(CachesListing("first").size(), 2U) << "what was granted stays granted";

  // Room freed: the revisions that were cut get their copies (first come, first served).
  ASSERT_TRUE(client_->Delete(core::resources::ModelRevisions(), namespace_, "first"));
  ASSERT_TRUE(WaitUntil(
      [&] { return CachesListing("second").size() == 2 && CachesListing("third").size() == 1; },
      std::chrono::seconds(75)))
      << RevisionStatus("second").dump() << RevisionStatus("third").dump();
  EXPECT_TRUE(
      WaitUntil([&] { return WithinQuota("second").value("status", "") == "True"; }, kWait));
  EXPECT_TRUE(WaitUntil([&] { return QuotaStatus().value("limitedCount", -1) == 0; }, kWait))
      << QuotaStatus().dump();

  // A lowered limit cuts on the next pass; no limit of that kind lets everything through.
  SetQuota({{"prestagedBytes", kCopy}});
  ASSERT_TRUE(WaitUntil(
      [&] { return CachesListing("second").size() + CachesListing("third").size() == 1; }, kWait));
  // Which one keeps the copy depends on which pass came first; the quota names those cut.
  const auto cut = [&] {
    json names = json::array();
    for (const char* name : {"second", "third"}) {
      if (WithinQuota(name).value("status", "") == "False") names.push_back(name);
    }
    return names;
  };
  EXPECT_TRUE(WaitUntil(
      [&] {
        const json status = QuotaStatus();
        return !cut().empty() && status.value("limitedRevisions", json()) == cut() &&
               status.contains("used") && status["used"].value("prestagedBytes", 0) == kCopy;
      },
      kWait))
      << QuotaStatus().dump() << cut().dump();
  SetQuota({{"pinnedBytes", "1Gi"}});
  ASSERT_TRUE(WaitUntil(
      [&] { return CachesListing("second").size() == 2 && CachesListing("third").size() == 1; },
      kWait));
  EXPECT_TRUE(WaitUntil([&] { return WithinQuota("third").value("status", "") == "True"; }, kWait));
}

TEST_F(QuotaClusterTest, WithoutAQuotaNoConditionIsWritten) {
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "free", 'd', 4)));
  ASSERT_TRUE(WaitUntil([&] { return CachesListing("free").size() == 4; }, kWait));
  ASSERT_TRUE(WaitForRevisionPasses());
  EXPECT_TRUE(WithinQuota("free").empty()) << RevisionStatus("free").dump();
}

}  // namespace
}  // namespace modelplane::controller
