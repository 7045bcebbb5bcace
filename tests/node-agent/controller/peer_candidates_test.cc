#include "node-agent/controller/peer_candidates.h"

#include <array>

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

namespace api = core::api;

std::string Sha(char c) {
  return "sha256:" + std::string(64, c);
}

LoadedRevision Revision() {
  LoadedRevision loaded;
  loaded.revision.spec.files = {{.path = "a", .size = 1, .sha256 = Sha('a')},
                                {.path = "b", .size = 1, .sha256 = Sha('b')}};
  return loaded;
}

core::Sha256Bytes Blob(char c) {
  return *core::ParseDigest(Sha(c));
}

TEST(PeerCandidatesTest, EveryFileOfAWholeHolderInTheOperatorsOrder) {
  const auto candidates = PeerCandidatesFromSpec(
      {{.node = "n1", .endpoint = "n1:7443", .zone = "z1", .state = "Ready"},
       {.node = "n2", .endpoint = "n2:7443", .zone = "z1", .state = "Staging"},
       {.node = "n3", .endpoint = "n3:7443", .zone = "z2", .state = "Ready"}},
      "", Revision(), "z1", "self:7443");
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(candidates[0].node_name, "n1");
  EXPECT_EQ(candidates[0].holding.ready, (std::set{Blob('a'), Blob('b')}));
  EXPECT_FALSE(candidates[0].holding.everything);
  EXPECT_TRUE(candidates[0].nearby);
  EXPECT_EQ(candidates[1].holding.staging, (std::set{Blob('a'), Blob('b')}));
  EXPECT_TRUE(candidates[1].holding.ready.empty());
  EXPECT_FALSE(candidates[2].nearby);
}

TEST(PeerCandidatesTest, AHolderThroughAnotherRevisionServesOnlyTheSharedFiles) {
  const auto candidates = PeerCandidatesFromSpec({{.node = "n1",
                                                   .endpoint = "n1:7443",
                                                   .zone = "z1",
                                                   .state = "Ready",
                                                   .files = {Sha('b'), Sha('c')}}},
                                                 "", Revision(), "z1", "self:7443");
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].holding.ready, std::set{Blob('b')});  // c is not this revision's
}

TEST(PeerCandidatesTest, ItselfUnknownStatesAndPeersWithNoFileOfItAreLeftOut) {
  const auto candidates = PeerCandidatesFromSpec(
      {{.node = "me", .endpoint = "self:7443", .state = "Ready"},
       {.node = "odd", .endpoint = "odd:7443", .state = "Evicting"},
       {.node = "none", .endpoint = "none:7443", .state = "Ready", .files = {Sha('c')}},
       {.node = "quiet", .endpoint = "", .state = "Ready"}},
      "", Revision(), "z1", "self:7443");
  EXPECT_TRUE(candidates.empty());
}

TEST(PeerCandidatesTest, TheEntrysTicketGoesWithEveryPeerWithTheRevisionsFileTree) {
  const auto candidates = PeerCandidatesFromSpec(
      {{.node = "n1", .endpoint = "n1:7443", .zone = "z1", .state = "Ready"},
       {.node = "n2", .endpoint = "n2:7443", .zone = "z2", .state = "Ready", .files = {Sha('b')}}},
      "v1.ticket", Revision(), "z1", "self:7443");
  ASSERT_EQ(candidates.size(), 2u);
  for (const PeerCandidate& candidate : candidates) {
    EXPECT_EQ(candidate.ticket.ticket, "v1.ticket");
    ASSERT_NE(candidate.ticket.files, nullptr);
    // The tree of every file of the revision, as the operator signed it: it proves a file a
    // partial holder serves as well as any other.
    const std::array files{Blob('a'), Blob('b')};
    EXPECT_EQ(candidate.ticket.files->root(), core::FileSetTree::Of(files).root());
    EXPECT_TRUE(candidate.ticket.files->ProofOf(Blob('b')).has_value());
  }
  const auto without = PeerCandidatesFromSpec(
      {{.node = "n1", .endpoint = "n1:7443", .zone = "z1", .state = "Ready"}}, "", Revision(), "z1",
      "self:7443");
  ASSERT_EQ(without.size(), 1u);
  EXPECT_TRUE(without[0].ticket.ticket.empty());
  EXPECT_EQ(without[0].ticket.files, nullptr);
}

}  // namespace
}  // namespace modelplane::agent
