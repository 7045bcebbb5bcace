#include "core/api/source_proofs.h"

#include <gtest/gtest.h>

namespace modelplane::core::api {
namespace {

// Test constants: a throwing allocation would end the test anyway.
// NOLINTBEGIN(cert-err58-cpp)
const RevisionReference kCopy{.namespace_name = "tenant-b", .name = "llama"};
const RevisionReference kOriginal{.namespace_name = "tenant-a", .name = "llama"};
// NOLINTEND(cert-err58-cpp)

CachedRevision ReadyEntry(std::vector<SourceProof> proofs) {
  return {.digest = "sha256:" + std::string(64, 'a'),
          .state = std::string(kCacheStateReady),
          .bytes_done = 10,
          .bytes_total = 10,
          .source_proofs = std::move(proofs)};
}

TEST(SourceProofsTest, AProofForTheSameNameInAnotherNamespaceDoesNotCount) {
  SourceProofs proofs;
  AddSourceProofs("n1",
                  ReadyEntry({{.revision = kOriginal, .state = std::string(kProofStateProven)}}),
                  kCopy, proofs);
  EXPECT_FALSE(proofs.proven);
  const CachedRevision seen = EntryForRevision(ReadyEntry({}), "n1", proofs);
  EXPECT_EQ(seen.state, kCacheStateStaging) << "held, but not yet for this revision";
  EXPECT_NE(seen.message.find("proving"), std::string::npos);
}

TEST(SourceProofsTest, OneNodesProofMakesEveryHolderReady) {
  SourceProofs proofs;
  AddSourceProofs("n1",
                  ReadyEntry({{.revision = kCopy,
                               .state = std::string(kProofStateFailed),
                               .reason = "SourceUnavailable"}}),
                  kCopy, proofs);
  AddSourceProofs("n2", ReadyEntry({{.revision = kCopy, .state = std::string(kProofStateProven)}}),
                  kCopy, proofs);
  EXPECT_TRUE(proofs.proven);
  EXPECT_EQ(EntryForRevision(ReadyEntry({}), "n3", proofs).state, kCacheStateReady);
  EXPECT_EQ(EntryForRevision(ReadyEntry({}), "n1", proofs).state, kCacheStateReady);
}

TEST(SourceProofsTest, AFailedProofFailsTheEntryWithTheNodesReason) {
  SourceProofs proofs;
  AddSourceProofs("n1",
                  ReadyEntry({{.revision = kCopy,
                               .state = std::string(kProofStateFailed),
                               .reason = std::string(kCacheReasonPossessionNotProven),
                               .message = "the revision's own sources did not serve the bytes"}}),
                  kCopy, proofs);
  const CachedRevision failed = EntryForRevision(ReadyEntry({}), "n1", proofs);
  EXPECT_EQ(failed.state, kCacheStateFailed);
  EXPECT_EQ(failed.reason, kCacheReasonPossessionNotProven);
  EXPECT_EQ(failed.message, "the revision's own sources did not serve the bytes");
  EXPECT_EQ(EntryForRevision(ReadyEntry({}), "n2", proofs).state, kCacheStateStaging)
      << "another holder has not checked yet";
}

TEST(SourceProofsTest, EntriesThatAreNotReadyAreLeftAsTheyAre) {
  CachedRevision staging = ReadyEntry({});
  staging.state = kCacheStateStaging;
  staging.bytes_done = 4;
  EXPECT_EQ(EntryForRevision(staging, "n1", SourceProofs{}), staging);
}

}  // namespace
}  // namespace modelplane::core::api
