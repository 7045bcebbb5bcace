// How a failed request to a hub becomes a HubRefusal (hub_errors.h) that says what the user can
// do about it.
//
// ModelScope says little: a 404 for a missing repository, a private one asked for without its
// token, and a missing file alike (its envelope's Message is the only text), so the call that
// failed decides between repository and file. The Hugging Face Hub says why in its X-Error-Code
// header (RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo) and its error message
// (X-Error-Message, or the JSON body's "error"); a 401 without a code means a private repository
// asked for without a token, or a token it refused. core's HTTP client hands a failed answer to
// callers as an Error (status, start of the body, and X-Error-Code as its server_reason); an
// answer without the header (a mirror) is read from the Hub's own messages, as huggingface_hub
// itself reads "Invalid credentials in Authorization header". Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

enum class HubCall { kRevision, kTree, kFile };

// Which hub's conventions an answer follows.
enum class HubDialect { kHuggingFace, kModelScope };

// What the request was about, for the sentence the user reads.
struct HubCallContext {
  HubDialect dialect = HubDialect::kHuggingFace;
  HubCall call = HubCall::kRevision;
  std::string endpoint;
  std::string repository;
  std::string revision;  // the branch, tag or commit asked for
  std::string path;      // kFile only
  bool token_sent = false;
};

// A failed answer as the Hub describes it.
struct HubAnswer {
  unsigned status = 0;
  std::string error_code;     // RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo or ""
  std::string error_message;  // the Hub's sentence, or the start of the body
};

// The answer an HTTP error stands for; status 0 when the request got no answer at all.
[[nodiscard]] HubAnswer AnswerFromHttpError(const Error& error);

// The refusal for an answer to `context`'s request.
[[nodiscard]] Error RefusalForAnswer(const HubAnswer& answer, const HubCallContext& context);

// HubThrottled for a throttling answer (429, or a CDN's 503) that the caller will not wait out
// any longer, saying why (`why`: "still throttled after 3 waits").
[[nodiscard]] Error ThrottledRefusal(const Error& error, const HubCallContext& context,
                                     std::string_view why);

// The refusal for any failure of `context`'s request: a HubRefusal already is one; an answer
// goes through RefusalForAnswer; a request that got none (refused connection, timeout) is
// HubUnavailable, a body past its bound HubAnswerTooLarge.
[[nodiscard]] Error RefusalForFailure(const Error& error, const HubCallContext& context);

}  // namespace modelplane::core
