#include "core/metrics/text_format.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

TEST(TextFormatTest, LabelValueEscapesBackslashQuoteAndNewlineOnly) {
  EXPECT_EQ(EscapeLabelValue(R"(C:\dir "x")"), R"(C:\\dir \"x\")");
  EXPECT_EQ(EscapeLabelValue("a\nb"), "a\\nb");
  EXPECT_EQ(EscapeLabelValue("tab\there"), "tab\there");
  EXPECT_EQ(EscapeLabelValue("modèle-😀"), "modèle-😀");
  EXPECT_EQ(EscapeLabelValue(""), "");
}

TEST(TextFormatTest, HelpEscapesBackslashAndNewlineButNotQuotes) {
  EXPECT_EQ(EscapeHelp(R"(a\b "quoted")"), R"(a\\b "quoted")");
  EXPECT_EQ(EscapeHelp("line1\nline2"), "line1\\nline2");
}

TEST(TextFormatTest, SampleValuesUseSpellingsPrometheusParses) {
  EXPECT_EQ(FormatSampleValue(0), "0");
  EXPECT_EQ(FormatSampleValue(3), "3");
  EXPECT_EQ(FormatSampleValue(1.5), "1.5");
  EXPECT_EQ(FormatSampleValue(0.1), "0.1");
  EXPECT_EQ(FormatSampleValue(-2.25), "-2.25");
  EXPECT_EQ(FormatSampleValue(1e21), "1e+21");
  EXPECT_EQ(FormatSampleValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatSampleValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
}

TEST(TextFormatTest, SampleValuesRoundTrip) {
  for (const double value : {0.1, 1.0 / 3.0, 123456789.123, 5e-324, 1.7976931348623157e308}) {
    EXPECT_EQ(std::strtod(FormatSampleValue(value).c_str(), nullptr), value)
        << FormatSampleValue(value);
  }
}

TEST(TextFormatTest, SampleLineWithAndWithoutLabels) {
  std::string out;
  AppendSampleLine(out, "x_total", "", 2);
  AppendSampleLine(out, "y", R"(a="1",b="2")", 0.5);
  EXPECT_EQ(out, "x_total 2\ny{a=\"1\",b=\"2\"} 0.5\n");
}

}  // namespace
}  // namespace modelplane::core
