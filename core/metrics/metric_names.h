// Validation of Prometheus metric and label names.
//
// Names are checked once, when a family is registered, so the exposition never has to escape or
// reject anything but label values. The rules are those of the text format 0.0.4: metric names
// match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* and must not start with
// "__", which Prometheus reserves for its own labels.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

[[nodiscard]] Status ValidateMetricName(std::string_view name);
[[nodiscard]] Status ValidateLabelName(std::string_view name);

}  // namespace modelplane::core
