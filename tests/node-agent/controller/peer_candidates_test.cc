#include "node-agent/controller/peer_candidates.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

namespace api = core::api;

core::Sha256Bytes Blob(int n) {
  return core::Sha256Of("blob-" + std::to_string(n));
}
core::Sha256Bytes Revision(int n) {
  return core::Sha256Of("revision-" + std::to_string(n));
}

api::ModelCache Cache(std::string name, std::string zone, std::string endpoint,
                      const std::vector<std::pair<int, std::string_view>>& revisions) {
  api::ModelCache cache;
  cache.metadata.name = std::move(name);
  api::ModelCacheStatus status{.peer_endpoint = std::move(endpoint), .zone = std::move(zone)};
  for (const auto& [revision, state] : revisions) {
    status.revisions.push_back(
        {.digest = core::FormatDigest(Revision(revision)), .state = std::string(state)});
  }
  cache.status = status;
  return cache;
}

class PeerCandidatesTest : public ::testing::Test {
 protected:
  PeerCandidatesTest() {
    // Revision 1 holds blobs 1, 2, 3; revision 2 shares blob 3 and adds blob 4.
    blobs_[Revision(1)] = {Blob(1), Blob(2), Blob(3)};
    blobs_[Revision(2)] = {Blob(3), Blob(4)};
    lookup_ = {
        .self_name = "gpu-0",
        .self_endpoint = "10.0.0.0:7443",
        .zone = "a",
        .blobs_of = [this](const core::Sha256Bytes& digest) -> const std::set<core::Sha256Bytes>* {
          auto found = blobs_.find(digest);
          return found == blobs_.end() ? nullptr : &found->second;
        }};
  }

  std::map<core::Sha256Bytes, std::set<core::Sha256Bytes>> blobs_;
  PeerLookup lookup_;
};

TEST_F(PeerCandidatesTest, ReadyHoldersComeFirstFromThisZoneAndStagingPeersOnlyFromIt) {
  const std::vector<api::ModelCache> caches = {
      Cache("gpu-0", "a", "10.0.0.0:7443", {{1, api::kCacheStateStaging}}),  // this node
      Cache("gpu-3", "b", "10.0.0.3:7443", {{1, api::kCacheStateReady}}),
      Cache("gpu-1", "a", "10.0.0.1:7443", {{1, api::kCacheStateStaging}}),
      Cache("gpu-2", "a", "10.0.0.2:7443", {{1, api::kCacheStateReady}}),
      Cache("gpu-4", "b", "10.0.0.4:7443", {{1, api::kCacheStateStaging}}),  // not its zone
      Cache("gpu-5", "a", "", {{1, api::kCacheStateReady}}),                 // serves no peers
  };
  const auto candidates = FindPeerCandidates(caches, blobs_[Revision(1)], lookup_);
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(candidates[0].endpoint, "10.0.0.1:7443");
  EXPECT_TRUE(candidates[0].nearby);
  EXPECT_TRUE(candidates[0].holding.ready.empty());
  EXPECT_EQ(candidates[0].holding.staging.size(), 3u);
  EXPECT_EQ(candidates[1].endpoint, "10.0.0.2:7443");
  EXPECT_EQ(candidates[1].holding.ready.size(), 3u);
  EXPECT_EQ(candidates[2].endpoint, "10.0.0.3:7443");
  EXPECT_FALSE(candidates[2].nearby);
  for (const auto& candidate : candidates) EXPECT_FALSE(candidate.holding.everything);
}

TEST_F(PeerCandidatesTest, ANodeHoldingASharedFileThroughAnotherRevisionServesThatFile) {
  const std::vector<api::ModelCache> caches = {
      Cache("gpu-1", "a", "10.0.0.1:7443", {{1, api::kCacheStateReady}}),
  };
  const auto candidates = FindPeerCandidates(caches, blobs_[Revision(2)], lookup_);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].holding.ready, std::set<core::Sha256Bytes>{Blob(3)});
  PeerRangeSourceOptions options{.endpoint = candidates[0].endpoint,
                                 .holding = candidates[0].holding};
  core::SystemClock clock;
  auto source = PeerRangeSource::Create(options, clock);
  ASSERT_TRUE(source);
  EXPECT_TRUE((*source)->MayHold(Blob(3)));
  EXPECT_FALSE((*source)->MayHold(Blob(4))) << "it has no revision with blob 4";
  EXPECT_FALSE((*source)->MayHoldLater(Blob(3)));
}

TEST_F(PeerCandidatesTest, UnknownRevisionsAndUnrelatedNodesAreLeftOut) {
  const std::vector<api::ModelCache> caches = {
      Cache("gpu-1", "a", "10.0.0.1:7443", {{7, api::kCacheStateReady}}),  // digest unknown here
      Cache("gpu-2", "a", "10.0.0.2:7443", {{2, api::kCacheStateFailed}}),
  };
  EXPECT_TRUE(FindPeerCandidates(caches, blobs_[Revision(1)], lookup_).empty());
}

}  // namespace
}  // namespace modelplane::agent
