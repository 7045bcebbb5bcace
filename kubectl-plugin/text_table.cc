#include "kubectl-plugin/text_table.h"

#include <algorithm>

namespace modelplane::cli {
namespace {

constexpr std::size_t kGap = 2;

void Pad(std::string& line, std::size_t columns) {
  line.append(columns, ' ');
}

}  // namespace

TextTable::TextTable(std::vector<TableColumn> columns, std::size_t width)
    : columns_(std::move(columns)), width_(width) {}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (std::string& cell : cells) cell = Printable(cell);
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render() const {
  const std::size_t count = columns_.size();
  if (count == 0) return "";
  std::vector<std::size_t> widths(count);
  std::vector<std::size_t> floors(count);
  for (std::size_t column = 0; column < count; ++column) {
    floors[column] = DisplayWidth(columns_[column].header);
    std::size_t widest = floors[column];
    for (const auto& row : rows_) widest = std::max(widest, DisplayWidth(row[column]));
    if (columns_[column].max_width > 0) {
      widest = std::min(widest, std::max(columns_[column].max_width, floors[column]));
    }
    widths[column] = widest;
  }
  std::size_t total = kGap * (count - 1);
  for (std::size_t width : widths) total += width;
  // Narrow the column with the most room above its header, one column at a time, so a single
  // long message gives way before short identifiers do.
  while (total > width_) {
    std::size_t pick = count;
    std::size_t most = 0;
    for (std::size_t column = 0; column < count; ++column) {
      const std::size_t slack = widths[column] - floors[column];
      if (slack > most) {
        most = slack;
        pick = column;
      }
    }
    if (pick == count) break;  // headers alone are wider than the line
    --widths[pick];
    --total;
  }

  auto render_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t column = 0; column < count; ++column) {
      const std::string text = Truncate(cells[column], widths[column]);
      const std::size_t pad = widths[column] - DisplayWidth(text);
      if (columns_[column].right_aligned) Pad(line, pad);
      line += text;
      if (column + 1 < count) {
        if (!columns_[column].right_aligned) Pad(line, pad);
        Pad(line, kGap);
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };

  std::vector<std::string> headers;
  headers.reserve(columns_.size());
  for (const TableColumn& column : columns_) headers.push_back(column.header);
  std::string out = render_line(headers);
  for (const auto& row : rows_) out += render_line(row);
  return out;
}

}  // namespace modelplane::cli
