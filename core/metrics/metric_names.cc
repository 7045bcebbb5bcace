#include "core/metrics/metric_names.h"

#include <fmt/format.h>

namespace modelplane::core {
namespace {

bool IsAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsAsciiDigit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

Status ValidateMetricName(std::string_view name) {
  if (name.empty()) return MakeError(ErrorCode::kInvalidArgument, "metric name is empty");
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool allowed = IsAsciiLetter(c) || c == '_' || c == ':' || (i > 0 && IsAsciiDigit(c));
    if (!allowed) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("metric name '{}' is invalid: it must match "
                                   "[a-zA-Z_:][a-zA-Z0-9_:]*",
                                   name));
    }
  }
  return Ok();
}

Status ValidateLabelName(std::string_view name) {
  if (name.empty()) return MakeError(ErrorCode::kInvalidArgument, "label name is empty");
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!(IsAsciiLetter(c) || c == '_' || (i > 0 && IsAsciiDigit(c)))) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("label name '{}' is invalid: it must match [a-zA-Z_][a-zA-Z0-9_]*", name));
    }
  }
  if (name.starts_with("__")) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("label name '{}' is reserved: names starting with '__' belong "
                                 "to Prometheus",
                                 name));
  }
  return Ok();
}

}  // namespace modelplane::core
