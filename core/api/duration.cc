#include "core/api/duration.h"

#include <cstdint>

namespace modelplane::core::api {

Result<std::chrono::seconds> ParseDuration(std::string_view text) {
  const auto fail = [] {
    return MakeError(ErrorCode::kInvalidArgument,
                     "must be a duration such as 24h, 1h30m or 90s (units h, m, s)");
  };
  if (text.empty() || text.size() > 32) return fail();
  std::int64_t total = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::int64_t amount = 0;
    const std::size_t digits_start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      amount = amount * 10 + (text[pos] - '0');
      if (amount > kMaxDuration.count()) {
        return MakeError(ErrorCode::kInvalidArgument, "must be at most ten years");
      }
      ++pos;
    }
    if (pos == digits_start || pos == text.size()) return fail();
    std::int64_t unit = 0;
    switch (text[pos]) {
      case 'h': unit = 3600; break;
      case 'm': unit = 60; break;
      case 's': unit = 1; break;
      default: return fail();
    }
    ++pos;
    total += amount * unit;
    if (total > kMaxDuration.count()) {
      return MakeError(ErrorCode::kInvalidArgument, "must be at most ten years");
    }
  }
  return std::chrono::seconds{total};
}

}  // namespace modelplane::core::api
