// How a non-2xx HTTP status becomes an Error, in one place for every caller of the client.
//
// Only 429, 502, 503 and 504 are retryable: they say "later may work". Other 5xx are server bugs
// and 4xx are the caller's mistake; retrying them only adds load.
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

[[nodiscard]] ErrorCode ErrorCodeForHttpStatus(unsigned status);
[[nodiscard]] bool IsRetryableHttpStatus(unsigned status);
// 301, 302, 303, 307 and 308: the answer names another URL in Location.
[[nodiscard]] bool IsRedirectStatus(unsigned status);
// "HTTP 404 from https://host:port/path: <detail>" with the code and retryability above.
[[nodiscard]] Error HttpStatusError(unsigned status, std::string_view url, std::string_view detail);

}  // namespace modelplane::core
