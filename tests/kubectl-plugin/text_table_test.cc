#include "kubectl-plugin/text_table.h"

#include <gtest/gtest.h>

#include "tests/kubectl-plugin/test_objects.h"

namespace modelplane::cli {
namespace {

TEST(TextTableTest, ColumnsAlignTwoSpacesApart) {
  TextTable table({{"NODE"}, {"STATE"}, {"BYTES", 0, true}});
  table.AddRow({"gpu-a", "Ready", "140.0 GiB"});
  table.AddRow({"gpu-node-12", "Staging", "3.0 GiB"});
  EXPECT_EQ(table.Render(),
            "NODE         STATE        BYTES\n"
            "gpu-a        Ready    140.0 GiB\n"
            "gpu-node-12  Staging    3.0 GiB\n");
}

TEST(TextTableTest, ColumnsStopAtTheirMaximumWidth) {
  TextTable table({{"NAME", 8}, {"X"}});
  table.AddRow({"a-rather-long-name", "1"});
  EXPECT_EQ(table.Render(), "NAME      X\na-rat...  1\n");
}

TEST(TextTableTest, TheLineFitsByNarrowingTheWidestColumn) {
  TextTable table({{"NODE"}, {"MESSAGE"}}, 40);
  table.AddRow({"gpu-a", std::string(80, 'm')});
  const std::string text = table.Render();
  EXPECT_TRUE(testing::FitsTerminal(text));
  for (const std::string& line : testing::Lines(text)) EXPECT_LE(line.size(), 40u);
  EXPECT_NE(text.find("gpu-a  mmm"), std::string::npos);
  EXPECT_NE(text.find("..."), std::string::npos);
}

TEST(TextTableTest, CellsAreMadePrintable) {
  TextTable table({{"A"}});
  table.AddRow({"x\x1b[2Jy"});
  EXPECT_EQ(table.Render(), "A\nx?[2Jy\n");
}

}  // namespace
}  // namespace modelplane::cli
