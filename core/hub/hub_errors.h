// Why a hub (the Hugging Face Hub, a mirror of it) refused an import, as one fixed reason word
// per cause, all in one table, so scripts match the word and people read the sentence after it.
//
// A refusal is a core::Error whose message starts "<Word>: <what happened>", e.g.
// "HubRevisionNotFound: revision v9 of acme/tiny does not exist". The word survives Wrap (it is
// looked for anywhere in the message), and the error code comes from the table, so callers that
// only branch on codes (kNotFound, kUnauthenticated, kThrottled...) still can.
// Thread safety: pure functions over a constant table.
#pragma once

#include <optional>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

enum class HubReason {
  kRepositoryNotFound,  // no such repository, or a private one asked for without a token
  kRevisionNotFound,    // no such branch, tag or commit
  kFileNotFound,        // the listing named a file the hub then did not serve
  kUnauthorized,        // the token was refused, or the repository is gated or forbidden
  kThrottled,           // 429 beyond the waits the importer allows
  kListingMismatch,     // bytes disagree with the tree listing (size or sha256)
  kIndexMismatch,       // the safetensors index names a shard outside the chosen files
  kMalformedAnswer,     // JSON the importer cannot read, or a field out of its grammar
  kAnswerTooLarge,      // an answer past its bound (a tree page, a JSON body, the index)
  kUnexpectedRedirect,  // a redirect to somewhere the request may not go
  kUnavailable,         // the hub could not be reached or answered with a server error
};

struct HubReasonEntry {
  HubReason reason;
  std::string_view word;  // stable: scripts match it
  ErrorCode code;
  bool retryable;
};

// The word for `reason`, e.g. "HubRepositoryNotFound".
[[nodiscard]] std::string_view HubReasonWord(HubReason reason);

// "<Word>: <detail>" with the table's code and retryability.
[[nodiscard]] Error HubRefusal(HubReason reason, std::string_view detail);

// The reason a HubRefusal (possibly wrapped) carries; nullopt for any other error.
[[nodiscard]] std::optional<HubReason> HubReasonOf(const Error& error);

}  // namespace modelplane::core
