#include "core/hub/hub_errors.h"

#include <array>
#include <string>

#include <fmt/format.h>

namespace modelplane::core {
namespace {

constexpr std::array<HubReasonEntry, 11> kHubReasons = {{
    {HubReason::kRepositoryNotFound, "HubRepositoryNotFound", ErrorCode::kNotFound, false},
    {HubReason::kRevisionNotFound, "HubRevisionNotFound", ErrorCode::kNotFound, false},
    {HubReason::kFileNotFound, "HubFileNotFound", ErrorCode::kNotFound, false},
    {HubReason::kUnauthorized, "HubUnauthorized", ErrorCode::kUnauthenticated, false},
    {HubReason::kThrottled, "HubThrottled", ErrorCode::kThrottled, true},
    {HubReason::kListingMismatch, "HubListingMismatch", ErrorCode::kDataLoss, false},
    {HubReason::kIndexMismatch, "HubIndexMismatch", ErrorCode::kInvalidArgument, false},
    {HubReason::kMalformedAnswer, "HubMalformedAnswer", ErrorCode::kInvalidArgument, false},
    {HubReason::kAnswerTooLarge, "HubAnswerTooLarge", ErrorCode::kResourceExhausted, false},
    {HubReason::kUnexpectedRedirect, "HubUnexpectedRedirect", ErrorCode::kPermissionDenied, false},
    {HubReason::kUnavailable, "HubUnavailable", ErrorCode::kUnavailable, true},
}};

const HubReasonEntry& EntryFor(HubReason reason) {
  for (const HubReasonEntry& entry : kHubReasons) {
    if (entry.reason == reason) return entry;
  }
  return kHubReasons.back();  // unreachable: the table lists every enumerator
}

}  // namespace

std::string_view HubReasonWord(HubReason reason) {
  return EntryFor(reason).word;
}

Error HubRefusal(HubReason reason, std::string_view detail) {
  const HubReasonEntry& entry = EntryFor(reason);
  return Error(entry.code, fmt::format("{}: {}", entry.word, detail), entry.retryable);
}

std::optional<HubReason> HubReasonOf(const Error& error) {
  const std::string& message = error.message();
  for (const HubReasonEntry& entry : kHubReasons) {
    const std::string marker = fmt::format("{}: ", entry.word);
    const std::size_t at = message.find(marker);
    // The word starts the message or follows a Wrap's ": ".
    if (at == 0 || (at != std::string::npos && at >= 2 && message.compare(at - 2, 2, ": ") == 0)) {
      return entry.reason;
    }
  }
  return std::nullopt;
}

}  // namespace modelplane::core
