// How the plugin writes numbers, times and untrusted text for a terminal: binary byte units,
// short durations and ages as kubectl prints them, truncation and word wrap by code point, and
// control characters made visible so a status message cannot move the cursor or change colours.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/api/timestamp.h"
#include "core/text/byte_text.h"

namespace modelplane::cli {

// Every line the plugin prints fits this many columns.
inline constexpr std::size_t kTerminalWidth = 100;

using core::FormatBytes;  // core/text/byte_text.h
// "850ms", "12.3s", "4m05s", "2h10m", "3d4h".
[[nodiscard]] std::string FormatSeconds(double seconds);
// kubectl's AGE column: "45s", "12m", "5h", "3d"; "0s" for a time in the future (clock skew).
[[nodiscard]] std::string FormatAge(core::api::Timestamp then, core::api::Timestamp now);
// "30%": part of whole, "-" when whole is 0.
[[nodiscard]] std::string FormatPercent(std::int64_t part, std::int64_t whole);

// One line of printable text: line breaks and tabs become spaces, other control characters and
// invalid UTF-8 become '?'.
[[nodiscard]] std::string Printable(std::string_view text);
// Terminal columns `text` takes, counting one per code point (names and messages here are
// Latin text; wide East Asian characters would count as one).
[[nodiscard]] std::size_t DisplayWidth(std::string_view text);
// At most `width` columns: the text itself, or its start followed by "...".
[[nodiscard]] std::string Truncate(std::string_view text, std::size_t width);
// Word-wraps a paragraph to `width` columns, each line starting with `indent`; a word longer
// than a line is cut. Ends without a line break.
[[nodiscard]] std::string WrapParagraph(std::string_view text, std::size_t width = kTerminalWidth,
                                        std::string_view indent = "");

// WrapParagraph with a hanging indent: the first line starts at column 0, the others after
// `indent`.
[[nodiscard]] std::string WrapHanging(std::string_view text, std::string_view indent,
                                      std::size_t width = kTerminalWidth);

// "Label:          value\n" with the label padded to one width, so blocks of fields align; the
// value is made printable and truncated to the line.
[[nodiscard]] std::string FieldLine(std::string_view label, std::string_view value);
// The same, the value word-wrapped with its continuation lines under its first.
[[nodiscard]] std::string WrappedFieldLine(std::string_view label, std::string_view value);

}  // namespace modelplane::cli
