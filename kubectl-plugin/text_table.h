// An aligned text table like kubectl's: upper-case headers, columns two spaces apart, cells
// truncated with "..." so every line fits the terminal width. Cells are untrusted text and are
// made printable (terminal_text.h) before they are measured.
//
// Thread safety: a value; not for concurrent mutation.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kubectl-plugin/terminal_text.h"

namespace modelplane::cli {

struct TableColumn {
  std::string header;
  std::size_t max_width = 0;  // 0: no limit of its own, only the line's
  bool right_aligned = false;
};

class TextTable {
 public:
  explicit TextTable(std::vector<TableColumn> columns, std::size_t width = kTerminalWidth);

  // Missing cells print empty, extra ones are dropped.
  void AddRow(std::vector<std::string> cells);
  [[nodiscard]] bool empty() const { return rows_.empty(); }

  // Header and rows, each line ending in '\n'. When the columns do not fit, the widest are
  // narrowed first, never below their header.
  [[nodiscard]] std::string Render() const;

 private:
  std::vector<TableColumn> columns_;
  std::size_t width_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace modelplane::cli
