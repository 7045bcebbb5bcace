#include "operator/quotas/quota_ledger.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Ten copies of the 10-byte revisions below.
api::NamespaceQuota TenCopies() {
  return {.prestaged_bytes = 100, .prestaged_by = "team-a/limits"};
}

QuotaAsk Prestage(std::vector<std::string> nodes) {
  return {.bytes_per_copy = 10, .prestage_nodes = std::move(nodes)};
}

api::QuotaBytes NothingWritten(const std::string&) {
  return {};
}

TEST(QuotaLedgerTest, TheSecondRevisionGetsWhatTheFirstLeft) {
  QuotaLedger ledger;
  const std::vector<std::string> keys = {"team-a/r1", "team-a/r2"};
  const QuotaGrant first =
      ledger.Decide("team-a", "team-a/r1", keys, Prestage({"a", "b", "c", "d", "e", "f", "g"}),
                    TenCopies(), NothingWritten);
  EXPECT_FALSE(first.Limited());
  const QuotaGrant second =
      ledger.Decide("team-a", "team-a/r2", keys, Prestage({"a", "b", "c", "d", "e"}), TenCopies(),
                    NothingWritten);
  EXPECT_THAT(second.prestage_nodes, ElementsAre("a", "b", "c"));
  EXPECT_TRUE(second.Limited());
  // The first keeps its share on its next pass: first come, first served.
  EXPECT_FALSE(ledger
                   .Decide("team-a", "team-a/r1", keys,
                           Prestage({"a", "b", "c", "d", "e", "f", "g"}), TenCopies(),
                           NothingWritten)
                   .Limited());
  const QuotaLedger::Usage usage = ledger.UsageOf(keys, NothingWritten);
  EXPECT_EQ(usage.used.prestaged_bytes, 100);
  EXPECT_THAT(usage.limited, ElementsAre("team-a/r2"));
}

TEST(QuotaLedgerTest, ARevisionNotDecidedYetCountsWithWhatItsEntriesSay) {
  QuotaLedger ledger;  // as after a restart: nothing decided
  const auto written = [](const std::string& key) {
    return key == "team-a/old" ? api::QuotaBytes{.prestaged_bytes = 90} : api::QuotaBytes{};
  };
  const QuotaGrant grant = ledger.Decide("team-a", "team-a/new", {"team-a/old", "team-a/new"},
                                         Prestage({"a", "b"}), TenCopies(), written);
  EXPECT_THAT(grant.prestage_nodes, ElementsAre("a"));
}

TEST(QuotaLedgerTest, ReleasedAndForgottenRevisionsFreeTheirShare) {
  QuotaLedger ledger;
  const std::vector<std::string> keys = {"team-a/r1", "team-a/r2"};
  (void)ledger.Decide("team-a", "team-a/r1", keys, Prestage(std::vector<std::string>(10, "n")),
                      TenCopies(), NothingWritten);
  EXPECT_THAT(
      ledger.Decide("team-a", "team-a/r2", keys, Prestage({"a"}), TenCopies(), NothingWritten)
          .prestage_nodes,
      IsEmpty());
  ledger.Release("team-a/r1");  // revoked, say
  EXPECT_THAT(
      ledger.Decide("team-a", "team-a/r2", keys, Prestage({"a"}), TenCopies(), NothingWritten)
          .prestage_nodes,
      ElementsAre("a"));
  ledger.Forget("team-a/r2");
  EXPECT_EQ(ledger.UsageOf(keys, NothingWritten).used, api::QuotaBytes{});
}

TEST(QuotaLedgerTest, OtherNamespacesDoNotCount) {
  QuotaLedger ledger;
  (void)ledger.Decide("team-b", "team-b/big", {"team-b/big"},
                      Prestage(std::vector<std::string>(50, "n")), {}, NothingWritten);
  EXPECT_FALSE(ledger
                   .Decide("team-a", "team-a/r1", {"team-a/r1"},
                           Prestage(std::vector<std::string>(10, "n")), TenCopies(), NothingWritten)
                   .Limited());
}

TEST(QuotaLedgerTest, TellsWhichNamespaceChangedOnlyWhenItDid) {
  std::vector<std::string> changed;
  QuotaLedger ledger([&](const std::string& namespace_name) { changed.push_back(namespace_name); });
  (void)ledger.Decide("team-a", "team-a/r1", {"team-a/r1"}, Prestage({"a"}), TenCopies(),
                      NothingWritten);
  (void)ledger.Decide("team-a", "team-a/r1", {"team-a/r1"}, Prestage({"a"}), TenCopies(),
                      NothingWritten);
  ledger.Release("team-a/r1");
  ledger.Release("team-a/r1");
  ledger.Forget("team-a/r1");
  ledger.Forget("team-a/r1");
  EXPECT_THAT(changed, ElementsAre("team-a", "team-a", "team-a"));
}

TEST(QuotaLedgerTest, ConcurrentDecisionsNeverPassTheLimit) {
  QuotaLedger ledger;
  std::vector<std::string> keys;
  keys.reserve(8);
  for (int i = 0; i < 8; ++i) keys.push_back("team-a/r" + std::to_string(i));
  std::atomic<std::int64_t> granted{0};
  std::vector<std::thread> threads;
  threads.reserve(keys.size());
  for (const std::string& key : keys) {
    threads.emplace_back([&, key] {
      const QuotaGrant grant = ledger.Decide("team-a", key, keys, Prestage({"a", "b", "c"}),
                                             TenCopies(), NothingWritten);
      granted += grant.charge.prestaged_bytes;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(granted.load(), 100);
  EXPECT_EQ(ledger.UsageOf(keys, NothingWritten).used.prestaged_bytes, 100);
}

}  // namespace
}  // namespace modelplane::controller
