#include "kubectl-plugin/terminal_text.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/text/utf8.h"

namespace modelplane::cli {
namespace {

constexpr std::size_t kFieldLabelWidth = 16;

// Byte offset just past the first `count` code points of `text` (invalid bytes count as one).
std::size_t PrefixBytes(std::string_view text, std::size_t count) {
  std::size_t position = 0;
  for (std::size_t taken = 0; taken < count && position < text.size(); ++taken) {
    const std::size_t length = core::Utf8SequenceLength(text, position);
    position += length == 0 ? 1 : length;
  }
  return position;
}

}  // namespace

std::string FormatSeconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  if (seconds < 1) return fmt::format("{:.0f}ms", std::floor(seconds * 1000));
  if (seconds < 60) return fmt::format("{:.1f}s", std::floor(seconds * 10) / 10);
  const auto whole = static_cast<std::int64_t>(seconds);
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  if (whole < 86400) return fmt::format("{}h{:02}m", whole / 3600, whole % 3600 / 60);
  return fmt::format("{}d{}h", whole / 86400, whole % 86400 / 3600);
}

std::string FormatAge(core::api::Timestamp then, core::api::Timestamp now) {
  // The thresholds of kubectl's duration.HumanDuration, so ages read the same as `kubectl get`.
  const std::int64_t seconds = std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::seconds>(now - then).count());
  const std::int64_t minutes = seconds / 60;
  const std::int64_t hours = seconds / 3600;
  if (seconds < 120) return fmt::format("{}s", seconds);
  if (minutes < 10) {
    return seconds % 60 == 0 ? fmt::format("{}m", minutes)
                             : fmt::format("{}m{}s", minutes, seconds % 60);
  }
  if (minutes < 180) return fmt::format("{}m", minutes);
  if (hours < 8) {
    return minutes % 60 == 0 ? fmt::format("{}h", hours)
                             : fmt::format("{}h{}m", hours, minutes % 60);
  }
  if (hours < 48) return fmt::format("{}h", hours);
  if (hours < 24 * 8) {
    return hours % 24 == 0 ? fmt::format("{}d", hours / 24)
                           : fmt::format("{}d{}h", hours / 24, hours % 24);
  }
  if (hours < 24 * 365 * 2) return fmt::format("{}d", hours / 24);
  return fmt::format("{}y", hours / (24 * 365));
}

std::string FormatPercent(std::int64_t part, std::int64_t whole) {
  if (whole <= 0 || part < 0) return "-";
  const double percent = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  return fmt::format("{:.0f}%", std::floor(percent));
}

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t position = 0;
  while (position < text.size()) {
    const std::size_t length = core::Utf8SequenceLength(text, position);
    if (length == 0) {
      out.push_back('?');
      ++position;
      continue;
    }
    const auto first = static_cast<unsigned char>(text[position]);
    if (length == 1) {
      if (first == '\n' || first == '\r' || first == '\t') {
        out.push_back(' ');
      } else if (first < 0x20 || first == 0x7f) {
        out.push_back('?');
      } else {
        out.push_back(static_cast<char>(first));
      }
    } else if (length == 2 && first == 0xc2 &&
               static_cast<unsigned char>(text[position + 1]) < 0xa0) {
      out.push_back('?');  // C1 control characters (U+0080..U+009F), CSI among them
    } else {
      out.append(text.substr(position, length));
    }
    position += length;
  }
  return out;
}

std::size_t DisplayWidth(std::string_view text) {
  std::size_t width = 0;
  std::size_t position = 0;
  while (position < text.size()) {
    const std::size_t length = core::Utf8SequenceLength(text, position);
    position += length == 0 ? 1 : length;
    ++width;
  }
  return width;
}

std::string Truncate(std::string_view text, std::size_t width) {
  if (DisplayWidth(text) <= width) return std::string(text);
  if (width <= 3) return std::string(text.substr(0, PrefixBytes(text, width)));
  return std::string(text.substr(0, PrefixBytes(text, width - 3))) + "...";
}

std::string WrapParagraph(std::string_view text, std::size_t width, std::string_view indent) {
  const std::size_t room = width > DisplayWidth(indent) + 8 ? width - DisplayWidth(indent) : 8;
  std::vector<std::string> lines;
  std::string line;
  std::size_t line_width = 0;
  auto flush = [&] {
    if (line_width == 0) return;
    lines.push_back(std::string(indent) + line);
    line.clear();
    line_width = 0;
  };
  std::size_t position = 0;
  while (position < text.size()) {
    while (position < text.size() && text[position] == ' ') ++position;
    std::size_t end = text.find(' ', position);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(position, end - position);
    position = end;
    while (!word.empty()) {
      const std::size_t word_width = DisplayWidth(word);
      if (line_width > 0 && line_width + 1 + word_width <= room) {
        line += ' ';
        line.append(word);
        line_width += 1 + word_width;
        break;
      }
      flush();
      if (word_width <= room) {
        line.assign(word);
        line_width = word_width;
        break;
      }
      const std::size_t cut = PrefixBytes(word, room);
      line.assign(word.substr(0, cut));
      line_width = room;
      word.remove_prefix(cut);
    }
  }
  flush();
  std::string out;
  for (std::size_t index = 0; index < lines.size(); ++index) {
    if (index > 0) out += '\n';
    out += lines[index];
  }
  return out;
}

std::string WrapHanging(std::string_view text, std::string_view indent, std::size_t width) {
  const std::string wrapped = WrapParagraph(text, width, indent);
  return wrapped.substr(std::min(wrapped.size(), indent.size()));
}

std::string FieldLine(std::string_view label, std::string_view value) {
  const std::string head = fmt::format("{:<{}}", std::string(label) + ":", kFieldLabelWidth);
  return head + Truncate(Printable(value), kTerminalWidth - kFieldLabelWidth) + "\n";
}

std::string WrappedFieldLine(std::string_view label, std::string_view value) {
  const std::string head = fmt::format("{:<{}}", std::string(label) + ":", kFieldLabelWidth);
  return head + WrapHanging(Printable(value), std::string(kFieldLabelWidth, ' ')) + "\n";
}

}  // namespace modelplane::cli
