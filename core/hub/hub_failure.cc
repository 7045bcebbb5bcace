#include "core/hub/hub_failure.h"

#include <array>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/hub/hub_errors.h"

namespace modelplane::core {
namespace {

// The Hub's X-Error-Code values the importer tells apart.
constexpr std::string_view kRepoNotFound = "RepoNotFound";
constexpr std::string_view kRevisionNotFound = "RevisionNotFound";
constexpr std::string_view kEntryNotFound = "EntryNotFound";
constexpr std::string_view kGatedRepo = "GatedRepo";
// The Hub's message for a token it does not accept; huggingface_hub matches it too.
constexpr std::string_view kInvalidCredentials = "Invalid credentials in Authorization header";

// The start of each message the Hub sends with the codes above (its JSON "error").
struct MessageCode {
  std::string_view message_start;
  std::string_view code;
};
constexpr std::array<MessageCode, 5> kMessageCodes = {{
    {"Repository not found", kRepoNotFound},
    {"Invalid rev id", kRevisionNotFound},
    {"Revision not found", kRevisionNotFound},
    {"Entry not found", kEntryNotFound},
    {"Access to model", kGatedRepo},  // "Access to model x/y is restricted..."
}};

bool StartsWithIgnoringCase(std::string_view text, std::string_view start) {
  if (text.size() < start.size()) return false;
  for (std::size_t i = 0; i < start.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(text[i]) != lower(start[i])) return false;
  }
  return true;
}

// The Hugging Face Hub's "error" member of a JSON body, or ModelScope's envelope's "Message",
// else the body as it came (it may be cut short).
std::string HubMessageOfBody(std::string_view body) {
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) {
    for (const char* member : {"error", "Message"}) {
      const auto message = parsed.find(member);
      if (message != parsed.end() && message->is_string()) return message->get<std::string>();
    }
  }
  return std::string(body);
}

// A repository the hub does not show: missing, or private to a token that was not given.
Error RepositoryNotShown(const HubCallContext& context) {
  if (!context.token_sent) {
    return HubRefusal(
        HubReason::kRepositoryNotFound,
        fmt::format(
            "{} on {}: private or missing; no token given (--token-file or {})", context.repository,
            context.endpoint,
            context.dialect == HubDialect::kModelScope ? "MODELSCOPE_API_TOKEN" : "HF_TOKEN"));
  }
  return HubRefusal(HubReason::kRepositoryNotFound,
                    fmt::format("repository {} not found on {} (or the token may not read it)",
                                context.repository, context.endpoint));
}

std::string_view CallNoun(HubCall call) {
  switch (call) {
    case HubCall::kRevision: return "the revision lookup";
    case HubCall::kTree: return "the file listing";
    case HubCall::kFile: return "a file download";
  }
  return "a request";
}

}  // namespace

HubAnswer AnswerFromHttpError(const Error& error) {
  HubAnswer answer;
  if (!error.http_status()) return answer;
  answer.status = *error.http_status();
  // The client's message is "HTTP <status> from <url>: <start of the body>" (http_status_error.h),
  // perhaps behind a Wrap; the URL holds no ": ".
  const std::string& message = error.message();
  const std::size_t from = message.find(fmt::format("HTTP {} from ", answer.status));
  const std::size_t colon = from == std::string::npos ? from : message.find(": ", from);
  if (colon != std::string::npos)
    answer.error_message = HubMessageOfBody(message.substr(colon + 2));
  // The Hub's X-Error-Code, which the client keeps as the error's server reason; an answer
  // without one (a mirror, an older Hub) is read from its message as huggingface_hub does.
  answer.error_code = error.server_reason();
  for (const MessageCode& known : kMessageCodes) {
    if (!answer.error_code.empty()) break;
    if (StartsWithIgnoringCase(answer.error_message, known.message_start)) {
      answer.error_code = std::string(known.code);
    }
  }
  return answer;
}

Error RefusalForAnswer(const HubAnswer& answer, const HubCallContext& context) {
  const std::string& repository = context.repository;
  const std::string said =
      answer.error_message.empty() ? "" : fmt::format(" (the hub said: {})", answer.error_message);
  if (answer.error_code == kRepoNotFound) {
    return HubRefusal(HubReason::kRepositoryNotFound,
                      fmt::format("repository {} not found on {}{}", repository, context.endpoint,
                                  context.token_sent ? " (or the token may not read it)" : ""));
  }
  if (context.dialect == HubDialect::kModelScope && answer.status == 404) {
    if (context.call != HubCall::kFile) return RepositoryNotShown(context);
    return HubRefusal(HubReason::kFileNotFound,
                      fmt::format("{} not found in {} at {}{}", context.path, repository,
                                  context.revision, said));
  }
  if (answer.error_code == kRevisionNotFound) {
    return HubRefusal(HubReason::kRevisionNotFound,
                      fmt::format("revision {} of {} not found", context.revision, repository));
  }
  if (answer.error_code == kEntryNotFound) {
    return HubRefusal(
        HubReason::kFileNotFound,
        fmt::format("{} not found in {} at {}", context.path.empty() ? "a file" : context.path,
                    repository, context.revision));
  }
  if (answer.error_code == kGatedRepo || answer.status == 403) {
    return HubRefusal(HubReason::kUnauthorized,
                      fmt::format("{} is gated or forbidden to this token: accept its conditions "
                                  "on the hub, or use a token that may read it{}",
                                  repository, said));
  }
  if (answer.status == 401) {
    if (context.token_sent || answer.error_message == kInvalidCredentials) {
      return HubRefusal(HubReason::kUnauthorized,
                        fmt::format("{}: the token was refused{}", repository, said));
    }
    return RepositoryNotShown(context);
  }
  if (answer.status == 429) {
    return HubRefusal(HubReason::kThrottled,
                      fmt::format("{} answered 429 to {} of {}{}", context.endpoint,
                                  CallNoun(context.call), repository, said));
  }
  if (answer.status == 404) {
    // A 404 without a code the Hub would send: not a Hub at this endpoint, or a path it lacks.
    if (context.call == HubCall::kFile) {
      return HubRefusal(HubReason::kFileNotFound,
                        fmt::format("{} not found in {} at {}{}", context.path, repository,
                                    context.revision, said));
    }
    return HubRefusal(HubReason::kRepositoryNotFound,
                      fmt::format("{} answered 404 to {} of {} without the Hub's error code "
                                  "(is it a Hub endpoint?){}",
                                  context.endpoint, CallNoun(context.call), repository, said));
  }
  return HubRefusal(HubReason::kUnavailable,
                    fmt::format("{} answered HTTP {} to {} of {}{}", context.endpoint,
                                answer.status, CallNoun(context.call), repository, said));
}

Error ThrottledRefusal(const Error& error, const HubCallContext& context, std::string_view why) {
  const HubAnswer answer = AnswerFromHttpError(error);
  return HubRefusal(HubReason::kThrottled,
                    fmt::format("{} answered HTTP {} to {} of {}{}; {}", context.endpoint,
                                answer.status, CallNoun(context.call), context.repository,
                                answer.error_message.empty()
                                    ? ""
                                    : fmt::format(" (the hub said: {})", answer.error_message),
                                why));
}

Error RefusalForFailure(const Error& error, const HubCallContext& context) {
  if (HubReasonOf(error)) return error;
  if (error.http_status()) return RefusalForAnswer(AnswerFromHttpError(error), context);
  if (error.code() == ErrorCode::kResourceExhausted) {
    return HubRefusal(
        HubReason::kAnswerTooLarge,
        fmt::format("{} of {}: {}", CallNoun(context.call), context.repository, error.message()));
  }
  return HubRefusal(HubReason::kUnavailable,
                    fmt::format("{} of {} on {}: {}", CallNoun(context.call), context.repository,
                                context.endpoint, error.message()));
}

}  // namespace modelplane::core
