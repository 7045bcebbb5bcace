// Failed answers of the Hub (as the HTTP client reports them, and as the Hub describes them) to
// the refusal the user reads: which reason word, and whether a 401 meant "no token" or "a token
// refused".
#include "core/hub/hub_failure.h"

#include <gtest/gtest.h>

#include "core/http/http_status_error.h"
#include "core/hub/hub_errors.h"

namespace modelplane::core {
namespace {

HubCallContext Call(HubCall call, bool token_sent = false) {
  return {.call = call,
          .endpoint = "https://hub.example",
          .repository = "acme/tiny",
          .revision = "v9",
          .path = "config.json",
          .token_sent = token_sent};
}

// What core's HTTP client returns for the Hub's error answer with this JSON body.
Error HubAnswered(unsigned status, std::string_view body) {
  return HttpStatusError(status, "https://hub.example/api/models/acme/tiny/revision/v9", body);
}

std::optional<HubReason> ReasonFor(unsigned status, std::string_view body, HubCall call,
                                   bool token_sent = false) {
  return HubReasonOf(RefusalForFailure(HubAnswered(status, body), Call(call, token_sent)));
}

TEST(AnswerFromHttpError, ReadsTheStatusAndTheHubsMessage) {
  const HubAnswer answer = AnswerFromHttpError(
      HubAnswered(404, R"({"error":"Repository not found"})").Wrap("after 1 attempts"));
  EXPECT_EQ(answer.status, 404u);
  EXPECT_EQ(answer.error_code, "RepoNotFound");
  EXPECT_EQ(answer.error_message, "Repository not found");
  EXPECT_EQ(AnswerFromHttpError(HubAnswered(404, R"({"error":"Invalid rev id: v9"})")).error_code,
            "RevisionNotFound");
  EXPECT_EQ(AnswerFromHttpError(HubAnswered(404, R"({"error":"Entry not found"})")).error_code,
            "EntryNotFound");
  // A body cut short keeps what there is.
  EXPECT_EQ(AnswerFromHttpError(HubAnswered(502, "Bad gateway <html")).error_message,
            "Bad gateway <html");
  EXPECT_EQ(AnswerFromHttpError(Error(ErrorCode::kUnavailable, "connection refused")).status, 0u);
}

TEST(RefusalForAnswer, TheHubsErrorCodesNameTheirReason) {
  const HubCallContext call = Call(HubCall::kRevision);
  EXPECT_EQ(HubReasonOf(RefusalForAnswer({404, "RepoNotFound", ""}, call)),
            HubReason::kRepositoryNotFound);
  EXPECT_EQ(HubReasonOf(RefusalForAnswer({401, "RepoNotFound", ""}, call)),
            HubReason::kRepositoryNotFound);
  EXPECT_EQ(HubReasonOf(RefusalForAnswer({404, "RevisionNotFound", ""}, call)),
            HubReason::kRevisionNotFound);
  EXPECT_EQ(HubReasonOf(RefusalForAnswer({404, "EntryNotFound", ""}, Call(HubCall::kFile))),
            HubReason::kFileNotFound);
  EXPECT_EQ(HubReasonOf(RefusalForAnswer({403, "GatedRepo", ""}, call)), HubReason::kUnauthorized);
  const Error revision = RefusalForAnswer({404, "RevisionNotFound", ""}, call);
  EXPECT_NE(revision.message().find("revision v9 of acme/tiny not found"), std::string::npos)
      << revision.message();
}

TEST(RefusalForFailure, A401SaysWhetherATokenWasGiven) {
  const Error anonymous =
      RefusalForFailure(HubAnswered(401, R"({"error":"Invalid username or password."})"),
                        Call(HubCall::kRevision, /*token_sent=*/false));
  EXPECT_EQ(HubReasonOf(anonymous), HubReason::kRepositoryNotFound);
  EXPECT_NE(anonymous.message().find("private or missing; no token given"), std::string::npos)
      << anonymous.message();
  const Error refused = RefusalForFailure(
      HubAnswered(401, R"({"error":"Invalid credentials in Authorization header"})"),
      Call(HubCall::kRevision, /*token_sent=*/true));
  EXPECT_EQ(HubReasonOf(refused), HubReason::kUnauthorized);
  EXPECT_NE(refused.message().find("the token was refused"), std::string::npos)
      << refused.message();
}

TEST(RefusalForFailure, StatusesWithoutACodeAndFailuresWithoutAnAnswer) {
  EXPECT_EQ(ReasonFor(429, "slow down", HubCall::kFile), HubReason::kThrottled);
  EXPECT_EQ(ReasonFor(404, "", HubCall::kFile), HubReason::kFileNotFound);
  EXPECT_EQ(ReasonFor(404, "<html>", HubCall::kRevision), HubReason::kRepositoryNotFound);
  EXPECT_EQ(ReasonFor(500, "oops", HubCall::kTree), HubReason::kUnavailable);
  EXPECT_EQ(HubReasonOf(RefusalForFailure(Error(ErrorCode::kUnavailable, "connection refused"),
                                          Call(HubCall::kTree))),
            HubReason::kUnavailable);
  EXPECT_EQ(HubReasonOf(RefusalForFailure(
                Error(ErrorCode::kResourceExhausted, "response body over the 16 byte limit"),
                Call(HubCall::kTree))),
            HubReason::kAnswerTooLarge);
  // A refusal made deeper down (a redirect off the origin) stays what it is.
  const Error redirect = HubRefusal(HubReason::kUnexpectedRedirect, "to another host");
  EXPECT_EQ(RefusalForFailure(redirect, Call(HubCall::kFile)), redirect);
}

TEST(ThrottledRefusal, SaysWhoThrottledWhatAndWhyTheImportGaveUp) {
  const Error throttled =
      ThrottledRefusal(HubAnswered(429, R"({"error":"You have exceeded the rate limit"})"),
                       Call(HubCall::kFile), "still throttled after 3 waits");
  EXPECT_EQ(throttled.message(),
            "HubThrottled: https://hub.example answered HTTP 429 to a file download of acme/tiny "
            "(the hub said: You have exceeded the rate limit); still throttled after 3 waits");
  EXPECT_EQ(throttled.code(), ErrorCode::kThrottled);
}

// ModelScope answers a missing repository, a private one without its token and a missing file
// with the same 404: the call that failed tells them apart.
TEST(RefusalForFailure, ModelScopes404DependsOnTheCall) {
  HubCallContext listing = Call(HubCall::kTree);
  listing.dialect = HubDialect::kModelScope;
  const Error body404 = HttpStatusError(
      404, "https://ms.example/api/v1/models/acme/tiny/repo/files",
      R"({"Code": 10010205001, "Data": null, "Message": "model acme/tiny not found"})");
  const Error anonymous = RefusalForFailure(body404, listing);
  EXPECT_EQ(HubReasonOf(anonymous), HubReason::kRepositoryNotFound);
  EXPECT_NE(anonymous.message().find("private or missing; no token given (--token-file or "
                                     "MODELSCOPE_API_TOKEN)"),
            std::string::npos)
      << anonymous.message();
  listing.token_sent = true;
  EXPECT_NE(RefusalForFailure(body404, listing).message().find("or the token may not read it"),
            std::string::npos);
  HubCallContext file = Call(HubCall::kFile);
  file.dialect = HubDialect::kModelScope;
  EXPECT_EQ(HubReasonOf(RefusalForFailure(body404, file)), HubReason::kFileNotFound);
  EXPECT_EQ(AnswerFromHttpError(body404).error_message, "model acme/tiny not found");
}

}  // namespace
}  // namespace modelplane::core
