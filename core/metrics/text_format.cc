#include "core/metrics/text_format.h"

#include <cmath>

#include <fmt/format.h>

namespace modelplane::core {

void AppendEscapedLabelValue(std::string& out, std::string_view value) {
  for (const char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

void AppendEscapedHelp(std::string& out, std::string_view help) {
  for (const char c : help) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

void AppendSampleValue(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else {
    // fmt's default for double is the shortest representation that round-trips.
    fmt::format_to(std::back_inserter(out), "{}", value);
  }
}

void AppendSampleLine(std::string& out, std::string_view name, std::string_view labels,
                      double value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    out += labels;
    out += '}';
  }
  out += ' ';
  AppendSampleValue(out, value);
  out += '\n';
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  AppendEscapedLabelValue(out, value);
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  AppendEscapedHelp(out, help);
  return out;
}

std::string FormatSampleValue(double value) {
  std::string out;
  AppendSampleValue(out, value);
  return out;
}

}  // namespace modelplane::core
