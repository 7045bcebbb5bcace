// HTTP byte ranges (RFC 9110 section 14): parsing a request's Range header against a known size on
// the server, and formatting/parsing the Range and Content-Range headers on the client.
//
// Only single ranges are honoured; a multi-range or malformed Range header is ignored (the whole
// body is served), which RFC 9110 allows and which avoids multipart bodies.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace modelplane::core {

// An inclusive byte interval [first, last], as HTTP writes it.
struct ByteRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;

  [[nodiscard]] std::uint64_t Length() const { return last - first + 1; }
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

struct RangeDecision {
  enum class Kind {
    kWhole,          // no (usable) Range header: answer 200 with the whole body
    kPartial,        // answer 206 with `range`
    kUnsatisfiable,  // answer 416 with "Content-Range: bytes */size"
  };
  Kind kind = Kind::kWhole;
  ByteRange range;
};

// Resolves a request's Range header value against a body of `size` bytes.
[[nodiscard]] RangeDecision ResolveRange(std::string_view header_value, std::uint64_t size);

// "bytes=first-last", or "bytes=first-" when last is absent.
[[nodiscard]] std::string FormatRangeHeader(std::uint64_t first, std::optional<std::uint64_t> last);

// "bytes first-last/size" (size "*" when unknown is reported as nullopt).
[[nodiscard]] std::string FormatContentRange(ByteRange range, std::uint64_t size);

struct ContentRange {
  ByteRange range;
  std::optional<std::uint64_t> size;
};

// Parses "bytes first-last/size" or "bytes first-last/*"; nullopt when malformed.
[[nodiscard]] std::optional<ContentRange> ParseContentRange(std::string_view value);

}  // namespace modelplane::core
