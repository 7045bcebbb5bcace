// The retention policy alone: victim order by value per byte, protected classes never chosen,
// shared blobs kept, unreferenced blobs first, the watermarks, admission and revocation.
#include "node-agent/eviction/retention_policy.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

core::Sha256Bytes Digest(std::string_view name) {
  return core::Sha256Of(name);
}

// A small world: blobs named by strings, revisions naming blobs.
class PolicyTest : public ::testing::Test {
 protected:
  void Blob(std::string_view name, std::uint64_t size) { input_.store_blobs[Digest(name)] = size; }
  RetentionCandidate& Revision(std::string_view name, const std::vector<std::string>& blobs,
                               double uses = 1) {
    RetentionCandidate candidate{.digest = Digest(name), .stored = true, .uses = uses};
    for (const std::string& blob : blobs) {
      candidate.blobs.push_back({.digest = Digest(blob), .size = input_.store_blobs[Digest(blob)]});
    }
    input_.revisions.push_back(candidate);
    return input_.revisions.back();
  }
  // Capacity 100 MiB, used = what the blobs hold.
  void Fill() {
    input_.capacity_bytes = 100 * kMiB;
    input_.used_bytes = 0;
    for (const auto& [digest, size] : input_.store_blobs) input_.used_bytes += size;
  }
  static std::vector<core::Sha256Bytes> Order(const std::vector<Victim>& victims) {
    std::vector<core::Sha256Bytes> order;
    order.reserve(victims.size());
    for (const Victim& victim : victims) order.push_back(victim.digest);
    return order;
  }

  RetentionInput input_{.watermarks = {.high_percent = 80, .low_percent = 70}};
};

TEST_F(PolicyTest, NothingIsEvictedBelowTheHighWatermark) {
  Blob("a", 79 * kMiB);
  Revision("r-a", {"a"});
  Fill();
  const RetentionPlan plan = PlanRetention(input_);
  EXPECT_FALSE(plan.above_high);
  EXPECT_TRUE(plan.victims.empty());
  EXPECT_EQ(plan.watermarks.high, 80 * kMiB);
  EXPECT_EQ(plan.watermarks.low, 70 * kMiB);
  EXPECT_EQ(plan.reclaimable_bytes, 79 * kMiB);
}

// Equal sizes and costs: the least used goes first, and eviction stops once at the low mark.
TEST_F(PolicyTest, LeastValuablePerByteGoesFirstAndEvictionStopsAtLow) {
  for (const char* name : {"a", "b", "c", "d"}) Blob(name, 21 * kMiB);
  Revision("r-a", {"a"}, 5);
  Revision("r-b", {"b"}, 1);
  Revision("r-c", {"c"}, 3);
  Revision("r-d", {"d"}, 2);
  Fill();  // 84 MiB: above 80, must get to 70: two victims
  const RetentionPlan plan = PlanRetention(input_);
  ASSERT_TRUE(plan.above_high);
  EXPECT_EQ(plan.bytes_to_free, 14 * kMiB);
  EXPECT_EQ(Order(plan.victims), (std::vector{Digest("r-b")}));
  EXPECT_EQ(plan.victims[0].blobs, (std::set{Digest("b")}));
  input_.used_bytes += 10 * kMiB;  // reserved or used alike: now 94, two must go
  input_.reserved_bytes = 0;
  const RetentionPlan more = PlanRetention(input_);
  EXPECT_EQ(Order(more.victims), (std::vector{Digest("r-b"), Digest("r-d")}));
}

// Same use, same size: the one a same-zone peer holds comes back fast, so it goes first; one
// only a peer in another zone holds next; an origin-only one last.
TEST_F(PolicyTest, CheapToRefetchGoesBeforeExpensive) {
  for (const char* name : {"a", "b", "c"}) Blob(name, 30 * kMiB);
  Revision("origin-only", {"a"});
  Revision("other-zone", {"b"}).refetch.peer_elsewhere = true;
  Revision("same-zone", {"c"}).refetch.peer_in_zone = true;
  Fill();
  input_.capacity_bytes = 40 * kMiB;  // 90 held, low at 28: all three must go
  const RetentionPlan plan = PlanRetention(input_);
  EXPECT_EQ(Order(plan.victims),
            (std::vector{Digest("same-zone"), Digest("other-zone"), Digest("origin-only")}));
  EXPECT_LT(plan.accounts.at(Digest("same-zone")).value_per_byte,
            plan.accounts.at(Digest("origin-only")).value_per_byte);
}

// Value is per byte: a big rarely used revision goes before a small one used as rarely, and a
// measured slow origin makes a revision worth more than a fast one.
TEST_F(PolicyTest, ValueIsPerByteAndPricedByMeasuredThroughput) {
  Blob("big", 50 * kMiB);
  Blob("small", 5 * kMiB);
  Revision("big", {"big"});
  Revision("small", {"small"});
  Fill();
  input_.used_bytes = 95 * kMiB;
  RetentionPlan plan = PlanRetention(input_);
  ASSERT_FALSE(plan.victims.empty());
  EXPECT_EQ(plan.victims[0].digest, Digest("big"));  // the fixed refetch cost favours small

  input_ = {.watermarks = {.high_percent = 80, .low_percent = 70}};
  Blob("fast", 30 * kMiB);
  Blob("slow", 30 * kMiB);
  Revision("fast", {"fast"}).refetch.origin_bytes_per_second = 1000.0 * kMiB;
  Revision("slow", {"slow"}).refetch.origin_bytes_per_second = 10.0 * kMiB;
  Fill();
  input_.used_bytes = 90 * kMiB;
  plan = PlanRetention(input_);
  EXPECT_EQ(Order(plan.victims), (std::vector{Digest("fast")}));
}

TEST_F(PolicyTest, ProtectedClassesAreNeverChosen) {
  const std::vector<std::pair<std::string, Protection>> classes = {
      {"in-use", Protection::kInUse},
      {"reserved", Protection::kReserved},
      {"pinned", Protection::kPinned},
      {"wanted", Protection::kWanted}};
  for (const auto& [name, protection] : classes) {
    Blob(name, 20 * kMiB);
    Revision(name, {name}, 0).protection.Add(protection);
  }
  Blob("last", 10 * kMiB);
  RetentionCandidate& last = Revision("last-copy", {"last"}, 0);
  last.refetch.origin_down = true;  // and no peer in the zone: the zone's last copy
  Blob("free", 5 * kMiB);
  Revision("unprotected", {"free"}, 100);
  Fill();  // 95 MiB, far above high: only the unprotected one may go, though low is not reached
  const RetentionPlan plan = PlanRetention(input_);
  EXPECT_EQ(Order(plan.victims), (std::vector{Digest("unprotected")}));
  EXPECT_EQ(plan.reclaimable_bytes, 5 * kMiB);
  EXPECT_EQ(plan.protected_bytes, 90 * kMiB);
  EXPECT_TRUE(plan.accounts.at(Digest("last-copy")).protection.Has(Protection::kLastZoneCopy));
  EXPECT_EQ(plan.protected_bytes_by_class.at(Protection::kLastZoneCopy), 10 * kMiB);
  EXPECT_EQ(plan.protected_bytes_by_class.at(Protection::kInUse), 20 * kMiB);
  for (const auto& [name, protection] : classes) {
    EXPECT_FALSE(plan.accounts.at(Digest(name)).evictable) << name;
  }
  // A peer in the zone holds it: no longer the last copy, so it may go.
  input_.revisions[4].refetch.peer_in_zone = true;
  EXPECT_EQ(PlanRetention(input_).victims.size(), 2u);
}

// A blob a kept revision references is never deleted: the victim frees only its own bytes,
// and its unique bytes say so.
TEST_F(PolicyTest, BlobsAKeptRevisionReferencesAreKept) {
  Blob("shared", 40 * kMiB);
  Blob("own", 10 * kMiB);
  Blob("kept-own", 35 * kMiB);
  Revision("victim", {"shared", "own"});
  Revision("kept", {"shared", "kept-own"}).protection.Add(Protection::kWanted);
  Fill();
  const RetentionPlan plan = PlanRetention(input_);
  ASSERT_EQ(plan.victims.size(), 1u);
  EXPECT_EQ(plan.victims[0].blobs, (std::set{Digest("own")}));
  EXPECT_EQ(plan.victims[0].bytes, 10 * kMiB);
  EXPECT_EQ(plan.accounts.at(Digest("victim")).unique_bytes, 10 * kMiB);
  EXPECT_EQ(plan.accounts.at(Digest("kept")).unique_bytes, 35 * kMiB);
  // A revision being staged (not stored) keeps the blobs it will use too.
  input_.revisions[1].stored = false;
  input_.revisions[1].protection = {};
  const RetentionPlan staging = PlanRetention(input_);
  ASSERT_EQ(staging.victims.size(), 1u);
  EXPECT_EQ(staging.victims[0].blobs, (std::set{Digest("own")}));
}

// Two unprotected revisions sharing a blob: the first victim frees only its own blob; the
// second, once chosen, carries the shared one.
TEST_F(PolicyTest, ASharedBlobGoesWithTheLastRevisionNamingIt) {
  Blob("shared", 50 * kMiB);
  Blob("x", 20 * kMiB);
  Blob("y", 20 * kMiB);
  Revision("r-x", {"shared", "x"}, 1);
  Revision("r-y", {"shared", "y"}, 2);
  Fill();  // 90: must free 20 -> r-x alone (frees x)
  RetentionPlan plan = PlanRetention(input_);
  ASSERT_EQ(Order(plan.victims), (std::vector{Digest("r-x")}));
  EXPECT_EQ(plan.victims[0].blobs, (std::set{Digest("x")}));
  input_.capacity_bytes = 60 * kMiB;  // must free 48: both, the shared blob with the second
  plan = PlanRetention(input_);
  ASSERT_EQ(Order(plan.victims), (std::vector{Digest("r-x"), Digest("r-y")}));
  EXPECT_EQ(plan.victims[1].blobs, (std::set{Digest("shared"), Digest("y")}));
  EXPECT_EQ(plan.victims[1].bytes, 70 * kMiB);
}

TEST_F(PolicyTest, UnreferencedBlobsGoFirst) {
  Blob("orphan", 15 * kMiB);
  Blob("a", 70 * kMiB);
  Revision("r-a", {"a"});
  Fill();  // 85: the orphan alone gets it to 70
  const RetentionPlan plan = PlanRetention(input_);
  ASSERT_EQ(plan.victims.size(), 1u);
  EXPECT_EQ(plan.victims[0].digest, core::Sha256Bytes{});
  EXPECT_EQ(plan.victims[0].blobs, (std::set{Digest("orphan")}));
}

// Kubelet shares the filesystem: the filesystem's own fill counts, so a small cache on a disk
// others filled is evicted from.
TEST_F(PolicyTest, SharedFilesystemPressureStartsEviction) {
  Blob("a", 10 * kMiB);
  Revision("r-a", {"a"});
  Fill();
  input_.watermarks = EffectiveWatermarks({}, /*shared=*/true);
  input_.filesystem = FilesystemFill{.size_bytes = 100 * kMiB, .used_bytes = 85 * kMiB};
  const RetentionPlan plan = PlanRetention(input_);
  EXPECT_TRUE(plan.above_high);
  EXPECT_EQ(Order(plan.victims), (std::vector{Digest("r-a")}));
  EXPECT_EQ(plan.free_bytes, 0u);  // 85 used is past the 85% limit (90 - 5)
}

TEST_F(PolicyTest, RevokedRevisionsArePurgedOnceUnusedAndWithheldAtOnce) {
  Blob("shared", 10 * kMiB);
  Blob("own", 10 * kMiB);
  Blob("other", 10 * kMiB);
  RetentionCandidate& revoked = Revision("revoked", {"shared", "own"});
  revoked.revoked = true;
  revoked.protection.Add(Protection::kInUse);
  Revision("fine", {"shared", "other"}).protection.Add(Protection::kWanted);
  Fill();
  RetentionPlan plan = PlanRetention(input_);
  EXPECT_TRUE(plan.purges.empty());                           // mounted: waits
  EXPECT_EQ(plan.withheld_blobs, (std::set{Digest("own")}));  // the shared blob still serves "fine"
  input_.revisions[0].force_purge = true;
  plan = PlanRetention(input_);
  ASSERT_EQ(plan.purges.size(), 1u);
  EXPECT_EQ(plan.purges[0].blobs, (std::set{Digest("own")}));
  input_.revisions[0].force_purge = false;
  input_.revisions[0].protection = {};
  plan = PlanRetention(input_);
  ASSERT_EQ(plan.purges.size(), 1u);
  // Below the high watermark all the same: revocation does not wait for pressure.
  EXPECT_FALSE(plan.above_high);
  // A remnant (no manifest any more, blobs left by a crash) is purged too.
  input_.revisions[0].stored = false;
  plan = PlanRetention(input_);
  ASSERT_EQ(plan.purges.size(), 1u);
  EXPECT_EQ(plan.purges[0].blobs, (std::set{Digest("own")}));
}

TEST_F(PolicyTest, AdmissionAdmitsEvictsFirstOrRefuses) {
  Blob("a", 30 * kMiB);
  Blob("b", 30 * kMiB);
  Revision("evictable", {"a"}, 1);
  Revision("wanted", {"b"}, 1).protection.Add(Protection::kWanted);
  Fill();  // 60 used, 40 free
  input_.revisions.push_back({.digest = Digest("new"), .protection = {Protection::kWanted}});
  AdmissionDecision decision =
      DecideAdmission(input_, {.digest = Digest("new"), .bytes_needed = 40 * kMiB});
  EXPECT_EQ(decision.outcome, AdmissionDecision::Outcome::kAdmit);
  decision = DecideAdmission(input_, {.digest = Digest("new"), .bytes_needed = 60 * kMiB});
  ASSERT_EQ(decision.outcome, AdmissionDecision::Outcome::kEvictFirst);
  EXPECT_EQ(Order(decision.victims), (std::vector{Digest("evictable")}));
  decision = DecideAdmission(input_, {.digest = Digest("new"), .bytes_needed = 71 * kMiB});
  EXPECT_EQ(decision.outcome, AdmissionDecision::Outcome::kRefuse);
  EXPECT_TRUE(decision.victims.empty());
  EXPECT_NE(decision.message.find("protected bytes: wanted 31457280"), std::string::npos)
      << decision.message;
}

// A prestage (speculative) does not displace a revision worth more per byte than itself; a
// staging a pod waits for does.
TEST_F(PolicyTest, SpeculativeStagingDoesNotDisplaceHigherValue) {
  Blob("hot", 60 * kMiB);
  Revision("hot", {"hot"}, 8);
  Fill();
  input_.revisions.push_back({.digest = Digest("new")});
  const AdmissionRequest prestage{
      .digest = Digest("new"), .bytes_needed = 60 * kMiB, .speculative = true, .uses = 1};
  AdmissionDecision decision = DecideAdmission(input_, prestage);
  EXPECT_EQ(decision.outcome, AdmissionDecision::Outcome::kRefuse);
  EXPECT_NE(decision.message.find("does not displace"), std::string::npos) << decision.message;
  AdmissionRequest in_use = prestage;
  in_use.speculative = false;
  EXPECT_EQ(DecideAdmission(input_, in_use).outcome, AdmissionDecision::Outcome::kEvictFirst);
  // Once the hot revision has aged below the newcomer, the prestage may displace it.
  input_.revisions[0].uses = 0.5;
  EXPECT_EQ(DecideAdmission(input_, prestage).outcome, AdmissionDecision::Outcome::kEvictFirst);
}

TEST_F(PolicyTest, RevisionsTheEvictorIsRemovingCountAsGone) {
  Blob("shared", 40 * kMiB);
  Blob("x", 25 * kMiB);
  Blob("y", 25 * kMiB);
  Revision("r-x", {"shared", "x"}, 1);
  Revision("r-y", {"shared", "y"}, 5);
  Fill();
  input_.evicting.insert(Digest("r-x"));
  const RetentionPlan plan = PlanRetention(input_);
  EXPECT_FALSE(plan.accounts.contains(Digest("r-x")));
  EXPECT_EQ(plan.accounts.at(Digest("r-y")).unique_bytes, 65 * kMiB);
}

TEST(RefetchCostTest, PeersInTheZoneAreCheapestAndADownOriginIsDear) {
  const RefetchSettings settings;
  const std::uint64_t bytes = 10ull << 30;
  const double zone = RefetchSeconds({.peer_in_zone = true}, settings, bytes);
  const double elsewhere = RefetchSeconds({.peer_elsewhere = true}, settings, bytes);
  const double origin = RefetchSeconds({}, settings, bytes);
  const double down = RefetchSeconds({.origin_down = true}, settings, bytes);
  EXPECT_LT(zone, elsewhere);
  EXPECT_LT(elsewhere, origin);
  EXPECT_LT(origin, down);
  EXPECT_DOUBLE_EQ(RefetchSeconds({.origin_bytes_per_second = 1 << 30}, settings, bytes),
                   settings.fixed_seconds + 10);
}

TEST(WatermarksTest, CappedBelowKubeletWhenSharingItsFilesystem) {
  WatermarkSettings settings{.high_percent = 90, .low_percent = 85};
  Watermarks separate = EffectiveWatermarks(settings, false);
  EXPECT_DOUBLE_EQ(separate.high_percent, 90);
  EXPECT_DOUBLE_EQ(separate.limit_percent, 100);
  Watermarks shared = EffectiveWatermarks(settings, true);
  EXPECT_DOUBLE_EQ(shared.high_percent, 80);   // image GC at 85, less the 5 margin
  EXPECT_DOUBLE_EQ(shared.low_percent, 75);    // kept 5 below the capped high
  EXPECT_DOUBLE_EQ(shared.limit_percent, 85);  // pod eviction at 90% used, less the margin
  EXPECT_TRUE(ValidateWatermarkSettings(settings));
  EXPECT_FALSE(ValidateWatermarkSettings({.high_percent = 70, .low_percent = 80}));
  EXPECT_FALSE(ValidateWatermarkSettings({.high_percent = 101, .low_percent = 80}));
  EXPECT_EQ(ParseKubeletFilesystem("shared"), KubeletFilesystem::kShared);
  EXPECT_FALSE(ParseKubeletFilesystem("maybe"));
}

TEST(WatermarksTest, AutoCompareTheFilesystemsOfTheTwoFolders) {
  const auto folder = std::filesystem::temp_directory_path();
  EXPECT_TRUE(ResolveKubeletSharing({.kubelet_root = folder.string()}, folder));
  EXPECT_FALSE(ResolveKubeletSharing({.kubelet_root = "/does/not/exist"}, folder));
  EXPECT_TRUE(ResolveKubeletSharing(
      {.kubelet_filesystem = KubeletFilesystem::kShared, .kubelet_root = "/does/not/exist"},
      folder));
  // /proc is never the filesystem of a temporary folder.
  EXPECT_FALSE(ResolveKubeletSharing({.kubelet_root = "/proc"}, folder));
}

}  // namespace
}  // namespace modelplane::agent
