#include "core/log/log_line.h"

#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// 2026-11-29T17:37:12.045Z
constexpr std::chrono::system_clock::time_point kTime{seconds(1795973832) + milliseconds(45)};

std::string Line(LogFormat format, std::initializer_list<LogField> fields,
                 LogLevel level = LogLevel::kInfo, std::string_view context = "") {
  return FormatLogLine(
      format,
      {.time = kTime, .level = level, .component = "node-agent", .event = "fetch_completed"},
      context, std::span<const LogField>(fields.begin(), fields.size()));
}

TEST(LogLineTest, ParsesFormatNames) {
  EXPECT_EQ(ParseLogFormat("keyvalue").value(), LogFormat::kKeyValue);
  EXPECT_EQ(ParseLogFormat("logfmt").value(), LogFormat::kKeyValue);
  EXPECT_EQ(ParseLogFormat("json").value(), LogFormat::kJson);
  EXPECT_EQ(ParseLogFormat("xml").error().message(),
            "invalid log format \"xml\": expected keyvalue or json");
}

TEST(LogLineTest, Rfc3339WithMillisecondsInUtc) {
  EXPECT_EQ(FormatRfc3339Millis(kTime), "2026-11-29T17:37:12.045Z");
  EXPECT_EQ(FormatRfc3339Millis(std::chrono::system_clock::time_point{}),
            "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339Millis(std::chrono::system_clock::time_point{milliseconds(-1)}),
            "1969-12-31T23:59:59.999Z");
}

TEST(LogLineTest, KeyValueWithTypedFields) {
  const std::string file = "model-00001.safetensors";
  const std::size_t bytes = 4'294'967'296;
  EXPECT_EQ(Line(LogFormat::kKeyValue, {{"file", file},
                                        {"bytes", bytes},
                                        {"seconds", 1.5},
                                        {"delta", -3},
                                        {"verified", true},
                                        {"tier", "peer"}}),
            "ts=2026-11-29T17:37:12.045Z level=info component=node-agent event=fetch_completed "
            "file=model-00001.safetensors bytes=4294967296 seconds=1.5 delta=-3 verified=true "
            "tier=peer");
}

TEST(LogLineTest, KeyValueQuotesAndEscapesSoOneEventIsOneLine) {
  EXPECT_EQ(Line(LogFormat::kKeyValue,
                 {{"path", "/models/a b"},
                  {"quote", "say \"hi\""},
                  {"multi", "line1\nline2\r\tend"},
                  {"eq", "a=b"},
                  {"slash", "C:\\x"},
                  {"empty", ""},
                  {"bell", "\x07"},
                  {"utf8", "mod\xC3\xA8le"},
                  {"broken", "a\xFF"}},
                 LogLevel::kWarn),
            "ts=2026-11-29T17:37:12.045Z level=warn component=node-agent event=fetch_completed "
            "path=\"/models/a b\" quote=\"say \\\"hi\\\"\" multi=\"line1\\nline2\\r\\tend\" "
            "eq=\"a=b\" slash=\"C:\\\\x\" empty=\"\" bell=\"\\u0007\" utf8=mod\xC3\xA8le "
            "broken=\"a\xEF\xBF\xBD\"");
}

TEST(LogLineTest, DurationsInSecondsAndNullStrings) {
  const char* missing = nullptr;
  EXPECT_EQ(Line(LogFormat::kKeyValue,
                 {{"elapsed_seconds", std::chrono::milliseconds(1500)}, {"name", missing}})
                .substr(82),
            "elapsed_seconds=1.5 name=\"\"");
}

TEST(LogLineTest, NonFiniteNumbers) {
  const double infinity = std::numeric_limits<double>::infinity();
  EXPECT_EQ(
      Line(LogFormat::kKeyValue,
           {{"a", infinity}, {"b", -infinity}, {"c", std::numeric_limits<double>::quiet_NaN()}})
          .substr(82),
      "a=+Inf b=-Inf c=NaN");
  EXPECT_EQ(
      Line(LogFormat::kJson, {{"a", infinity}, {"c", std::numeric_limits<double>::quiet_NaN()}})
          .substr(99),
      R"("a":"+Inf","c":"NaN"})");
}

TEST(LogLineTest, JsonLine) {
  EXPECT_EQ(Line(LogFormat::kJson,
                 {{"file", "a \"b\"\n"},
                  {"bytes", 12u},
                  {"seconds", 0.25},
                  {"ok", false},
                  {"ctl", "\x01"}},
                 LogLevel::kError),
            R"({"ts":"2026-11-29T17:37:12.045Z","level":"error","component":"node-agent",)"
            R"("event":"fetch_completed","file":"a \"b\"\n","bytes":12,"seconds":0.25,)"
            R"("ok":false,"ctl":"\u0001"})");
}

TEST(LogLineTest, KeysAreSanitisedAndNeverRepeatTheHeader) {
  EXPECT_EQ(Line(LogFormat::kKeyValue, {{"level", 1}, {"bad key=", 2}, {"", 3}, {"a.b-c_d", 4}})
                .substr(82),
            "_level=1 bad_key_=2 _=3 a.b-c_d=4");
}

TEST(LogLineTest, LongValuesAreTruncatedOnACharacterBoundary) {
  // "é" is two bytes and straddles the limit, so the cut backs off by one byte: 6 dropped.
  const std::string value = std::string(kMaxLogValueBytes - 1, 'x') + "\xC3\xA9" + "tail";
  const std::string line = Line(LogFormat::kKeyValue, {{"v", value}});
  const std::string expected_value =
      "\"" + std::string(kMaxLogValueBytes - 1, 'x') + "...[6 bytes truncated]\"";
  EXPECT_EQ(line.substr(82), "v=" + expected_value);
}

TEST(LogLineTest, ContextFieldsComeRightAfterTheHeader) {
  std::string context;
  const std::vector<LogField> fields = {{"revision", "r1"}};
  AppendLogFields(context, LogFormat::kKeyValue, fields);
  EXPECT_EQ(Line(LogFormat::kKeyValue, {{"file", "x"}}, LogLevel::kInfo, context).substr(82),
            "revision=r1 file=x");
}

}  // namespace
}  // namespace modelplane::core
