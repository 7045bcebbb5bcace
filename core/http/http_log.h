// The logging hook the HTTP server and client report through, until core/log exists.
//
// One call is one event: a past-tense event name plus key=value fields, e.g.
// ("accept_failed", "error=Too many open files backoff_ms=50"). The callback may be called from
// any io thread concurrently, so it must be thread-safe; an empty function discards events.
#pragma once

#include <functional>
#include <string_view>

namespace modelplane::core {

enum class HttpLogLevel { kDebug, kInfo, kWarning, kError };

using HttpLogFunction =
    std::function<void(HttpLogLevel level, std::string_view event, std::string_view fields)>;

}  // namespace modelplane::core
