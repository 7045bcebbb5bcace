// Turns an API server answer (HTTP status plus its metav1.Status body) into an Error a caller
// can act on: not found, conflict, already exists, gone (410), invalid (422), throttled (429),
// or a retryable server error.
#pragma once

#include <string>

#include "core/error/error.h"

namespace modelplane::core {

// `body` may be a metav1.Status JSON document or anything else (its text is quoted, bounded).
[[nodiscard]] Error ErrorFromApiResponse(int http_status, const std::string& body,
                                         const std::string& what);

}  // namespace modelplane::core
