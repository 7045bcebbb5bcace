#include "kubectl-plugin/terminal_text.h"

#include <gtest/gtest.h>

#include "tests/kubectl-plugin/test_objects.h"

namespace modelplane::cli {
namespace {

TEST(TerminalTextTest, BytesUseBinaryUnitsWithOneDecimal) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(140 * testing::kGiB), "140.0 GiB");
  EXPECT_EQ(FormatBytes(1024 * testing::kGiB - 1), "1.0 TiB");  // never "1024.0 GiB"
  EXPECT_EQ(FormatBytes(-1), "-");
}

TEST(TerminalTextTest, SecondsAreShortAndRoundDown) {
  EXPECT_EQ(FormatSeconds(0.25), "250ms");
  EXPECT_EQ(FormatSeconds(42.56), "42.5s");
  EXPECT_EQ(FormatSeconds(245), "4m05s");
  EXPECT_EQ(FormatSeconds(7800), "2h10m");
  EXPECT_EQ(FormatSeconds(3 * 86400 + 4 * 3600 + 5), "3d4h");
  EXPECT_EQ(FormatSeconds(-1), "-");
}

TEST(TerminalTextTest, AgesReadLikeKubectl) {
  const auto now = testing::Now();
  EXPECT_EQ(FormatAge(now - std::chrono::seconds(45), now), "45s");
  EXPECT_EQ(FormatAge(now - std::chrono::seconds(150), now), "2m30s");
  EXPECT_EQ(FormatAge(now - std::chrono::minutes(42), now), "42m");
  EXPECT_EQ(FormatAge(now - std::chrono::hours(5), now), "5h");
  EXPECT_EQ(FormatAge(now - std::chrono::hours(72), now), "3d");
  EXPECT_EQ(FormatAge(now + std::chrono::seconds(5), now), "0s");  // skewed clocks
}

TEST(TerminalTextTest, ControlCharactersCannotReachTheTerminal) {
  EXPECT_EQ(Printable("line\nbreak\tand\x1b[31mred"), "line break and?[31mred");
  EXPECT_EQ(Printable("c1 \xc2\x9b csi"), "c1 ? csi");
  EXPECT_EQ(Printable("bad \xff byte"), "bad ? byte");
  EXPECT_EQ(Printable("ünïcode ≤"), "ünïcode ≤");
}

TEST(TerminalTextTest, TruncationCountsCodePointsAndMarksTheCut) {
  EXPECT_EQ(Truncate("short", 10), "short");
  EXPECT_EQ(Truncate("a-very-long-node-name", 10), "a-very-...");
  EXPECT_EQ(Truncate("ääääääää", 5), "ää...");
  EXPECT_EQ(DisplayWidth(Truncate("ääääääää", 5)), 5u);
}

TEST(TerminalTextTest, ParagraphsWrapAtTheWidthWithAnIndent) {
  const std::string text =
      "Pod team-a/llama-0 is gated: it keeps the scheduling gate modelplane.io/weights until "
      "its model weights are verified on nodes it may run on, which takes a while.";
  const std::string wrapped = WrapParagraph(text, 40, "  ");
  for (const std::string& line : testing::Lines(wrapped)) {
    EXPECT_LE(line.size(), 40u) << line;
    EXPECT_EQ(line.substr(0, 2), "  ");
  }
  EXPECT_EQ(WrapHanging("one two three four", "    ", 12), "one two\n    three\n    four");
  // A word longer than a line is cut rather than overflowing it.
  EXPECT_EQ(WrapParagraph(std::string(25, 'x'), 10), "xxxxxxxxxx\nxxxxxxxxxx\nxxxxx");
}

TEST(TerminalTextTest, FieldLinesAlignTheirValues) {
  EXPECT_EQ(FieldLine("Phase", "Ready"), "Phase:          Ready\n");
  const std::string long_value(200, 'v');
  EXPECT_TRUE(testing::FitsTerminal(FieldLine("Digest", long_value)));
  const std::string wrapped =
      WrappedFieldLine("Condition", std::string(60, 'w') + " " + std::string(60, 'w'));
  const auto lines = testing::Lines(wrapped);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].substr(0, 16), std::string(16, ' '));
}

}  // namespace
}  // namespace modelplane::cli
