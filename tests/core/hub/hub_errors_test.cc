// The reason words scripts match: each reason has its own, it starts the message, and it is
// found again behind a Wrap.
#include "core/hub/hub_errors.h"

#include <set>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

constexpr HubReason kEveryReason[] = {
    HubReason::kRepositoryNotFound, HubReason::kRevisionNotFound, HubReason::kFileNotFound,
    HubReason::kUnauthorized,       HubReason::kThrottled,        HubReason::kListingMismatch,
    HubReason::kIndexMismatch,      HubReason::kMalformedAnswer,  HubReason::kAnswerTooLarge,
    HubReason::kUnexpectedRedirect, HubReason::kUnavailable};

TEST(HubErrors, EveryReasonHasItsOwnWordThatStartsTheMessage) {
  std::set<std::string_view> words;
  for (const HubReason reason : kEveryReason) {
    const std::string_view word = HubReasonWord(reason);
    EXPECT_TRUE(word.starts_with("Hub")) << word;
    EXPECT_TRUE(words.insert(word).second) << word;
    const Error refusal = HubRefusal(reason, "what happened");
    EXPECT_EQ(refusal.message(), std::string(word) + ": what happened");
    EXPECT_EQ(HubReasonOf(refusal), reason);
    EXPECT_EQ(HubReasonOf(refusal.Wrap("importing acme/tiny")), reason);
  }
}

TEST(HubErrors, CodesLetCallersBranchWithoutTheWord) {
  EXPECT_EQ(HubRefusal(HubReason::kRepositoryNotFound, "x").code(), ErrorCode::kNotFound);
  EXPECT_EQ(HubRefusal(HubReason::kUnauthorized, "x").code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(HubRefusal(HubReason::kThrottled, "x").code(), ErrorCode::kThrottled);
  EXPECT_TRUE(HubRefusal(HubReason::kThrottled, "x").retryable());
  EXPECT_EQ(HubRefusal(HubReason::kListingMismatch, "x").code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(HubRefusal(HubReason::kListingMismatch, "x").retryable());
}

TEST(HubErrors, OtherErrorsCarryNoReason) {
  EXPECT_EQ(HubReasonOf(Error(ErrorCode::kNotFound, "ModelRevision x not found")), std::nullopt);
  // A word inside another word, or without its colon, is not a reason.
  EXPECT_EQ(HubReasonOf(Error(ErrorCode::kInternal, "NotHubThrottled: x")), std::nullopt);
  EXPECT_EQ(HubReasonOf(Error(ErrorCode::kInternal, "HubThrottled x")), std::nullopt);
}

}  // namespace
}  // namespace modelplane::core
