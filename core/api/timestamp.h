// Kubernetes timestamps (RFC 3339, as metav1.Time and metav1.MicroTime write them).
//
// Stored with microsecond precision so stage timestamps keep sub-second detail; written back
// without a fraction when it is zero, so a metav1.Time read from the API server round-trips.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/error/error.h"
#include "core/json/json_object_reader.h"

namespace modelplane::core::api {

using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;

// Accepts "2024-05-01T12:00:00Z", "2024-05-01T12:00:00.123456Z" and numeric offsets
// ("+02:00"); fractions beyond microseconds are truncated. Years 0001-9999.
[[nodiscard]] Result<Timestamp> ParseTimestamp(std::string_view text);

// UTC, "Z" suffix, six fraction digits only when the fraction is not zero.
[[nodiscard]] std::string FormatTimestamp(Timestamp time);

// The timestamp field `key` of the object `reader` reads; absent or null leaves `out` empty.
[[nodiscard]] Status ReadTimestamp(const JsonObjectReader& reader, std::string_view key,
                                   std::optional<Timestamp>& out);
// A required timestamp field.
[[nodiscard]] Status ReadTimestamp(const JsonObjectReader& reader, std::string_view key,
                                   Timestamp& out);

}  // namespace modelplane::core::api
