// The lexical pieces of the Prometheus text exposition format 0.0.4: escaping of label values
// and HELP text, and sample values formatted so every Prometheus parser reads them back.
//
// Label values escape backslash, double quote and line feed; HELP text escapes backslash and
// line feed only (a quote is literal there). Sample values use the shortest decimal form that
// round-trips a double, and the spellings "+Inf", "-Inf" and "NaN" that Go's ParseFloat and
// Python's float() both accept.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/text/utf8.h"  // IsValidUtf8: label values must be UTF-8

namespace modelplane::core {

void AppendEscapedLabelValue(std::string& out, std::string_view value);
void AppendEscapedHelp(std::string& out, std::string_view help);
void AppendSampleValue(std::string& out, double value);

// Appends one sample line, `name{labels} value` and a line feed. `labels` is an already escaped
// list such as `method="GET",code="200"`, or empty for a sample without labels.
void AppendSampleLine(std::string& out, std::string_view name, std::string_view labels,
                      double value);

[[nodiscard]] std::string EscapeLabelValue(std::string_view value);
[[nodiscard]] std::string EscapeHelp(std::string_view help);
[[nodiscard]] std::string FormatSampleValue(double value);

}  // namespace modelplane::core
