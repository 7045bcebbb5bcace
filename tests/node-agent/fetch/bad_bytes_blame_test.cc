#include "node-agent/fetch/bad_bytes_blame.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using Sources = std::vector<std::size_t>;

TEST(BadBytesBlameTest, ASoleContributorAnswersForTheFile) {
  EXPECT_EQ(ChooseBlamedSources({2}, [](std::size_t) { return false; }), Sources{2});
  EXPECT_EQ(ChooseBlamedSources({}, [](std::size_t) { return false; }), Sources{});
}

TEST(BadBytesBlameTest, SourcesDistrustedElsewhereAnswerAlone) {
  // The peer (0) was cooled down by another file's mismatch; the object store (2) finished
  // this file's ranges. Only the peer is blamed, so the object store can serve it again.
  EXPECT_EQ(ChooseBlamedSources({0, 2}, [](std::size_t source) { return source == 0; }),
            Sources{0});
}

TEST(BadBytesBlameTest, WithoutSuspicionTheMostAuthoritativeContributorKeepsServing) {
  EXPECT_EQ(ChooseBlamedSources({0, 1, 3}, [](std::size_t) { return false; }), (Sources{0, 1}));
}

}  // namespace
}  // namespace modelplane::agent
