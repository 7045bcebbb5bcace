#include "core/config/config_map.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/config/config_loader.h"

namespace modelplane::core {
namespace {

using namespace std::chrono_literals;

struct TlsConfig {
  bool enabled = false;
  std::string certificate_file;
};

void BindConfig(ConfigMap& map, TlsConfig& config) {
  map.Required("enabled", config.enabled);
  map.Optional("certificate_file", config.certificate_file);
}

struct HttpConfig {
  std::string address = "0.0.0.0";
  int port = 8080;
  std::chrono::milliseconds read_timeout{30'000};
  TlsConfig tls;
};

void BindConfig(ConfigMap& map, HttpConfig& config) {
  map.Optional("address", config.address);
  map.Required("port", config.port, InRange(1, 65535));
  map.Optional("read_timeout", config.read_timeout, InRange(1ms, 1h));
  map.Optional("tls", config.tls);
}

struct Source {
  std::string kind;
  std::string uri;
  ByteSize min_request{8ull << 20};
};

void BindConfig(ConfigMap& map, Source& source) {
  map.Required("kind", source.kind, OneOf{{"s3", "http", "filesystem"}});
  map.Required("uri", source.uri);
  map.Optional("min_request", source.min_request, InRange(ByteSize{4096}, ByteSize{1ull << 30}));
}

enum class Mode { kFast, kSafe };

Result<Mode> ParseMode(std::string_view text) {
  if (text == "fast") return Mode::kFast;
  if (text == "safe") return Mode::kSafe;
  return MakeError(ErrorCode::kInvalidArgument, "mode must be fast or safe");
}

struct AgentConfig {
  HttpConfig http;
  ByteSize cache_capacity{1ull << 30};
  double admit_ratio = 0.5;
  std::vector<std::string> peers;
  std::map<std::string, std::string> labels;
  std::optional<std::uint32_t> max_fetches;
  std::vector<Source> sources;
  std::chrono::nanoseconds resync = 5min;
  Mode mode = Mode::kSafe;
  std::uint8_t priority = 3;
};

void BindConfig(ConfigMap& map, AgentConfig& config) {
  map.Required("http", config.http);
  map.Optional("cache_capacity", config.cache_capacity);
  map.Optional("admit_ratio", config.admit_ratio, InRange(0.0, 1.0));
  map.Optional("peers", config.peers);
  map.Optional("labels", config.labels);
  map.Optional("max_fetches", config.max_fetches, InRange(1, 4096));
  map.Optional("sources", config.sources);
  map.Optional("resync", config.resync);
  map.Optional("mode", config.mode, ParsedBy{&ParseMode});
  map.Optional("priority", config.priority);
}

constexpr std::string_view kFullConfig = R"(# node agent
http:
  address: 127.0.0.1
  port: 9443
  read_timeout: 2.5s
  tls:
    enabled: true
    certificate_file: /etc/tls/cert.pem
cache_capacity: 256Gi
admit_ratio: 0.75
peers: [10.0.0.1:7070, "10.0.0.2:7070"]
labels:
  zone: us-east-1a
  "odd key": "value: with colon"
max_fetches: 64
sources:
  - kind: s3
    uri: s3://bucket/models
    min_request: 16MiB
  - kind: http
    uri: https://origin.example/models
resync: 1h30m
mode: fast
priority: 7
)";

TEST(ConfigMapTest, BindsEveryKindOfField) {
  auto config = LoadConfigString<AgentConfig>(kFullConfig, "agent.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->http.address, "127.0.0.1");
  EXPECT_EQ(config->http.port, 9443);
  EXPECT_EQ(config->http.read_timeout, 2500ms);
  EXPECT_TRUE(config->http.tls.enabled);
  EXPECT_EQ(config->http.tls.certificate_file, "/etc/tls/cert.pem");
  EXPECT_EQ(config->cache_capacity.bytes, 256ull << 30);
  EXPECT_EQ(config->admit_ratio, 0.75);
  EXPECT_EQ(config->peers, (std::vector<std::string>{"10.0.0.1:7070", "10.0.0.2:7070"}));
  EXPECT_EQ(config->labels, (std::map<std::string, std::string>{{"zone", "us-east-1a"},
                                                                {"odd key", "value: with colon"}}));
  EXPECT_EQ(config->max_fetches, 64u);
  ASSERT_EQ(config->sources.size(), 2u);
  EXPECT_EQ(config->sources[0].kind, "s3");
  EXPECT_EQ(config->sources[0].min_request.bytes, 16ull << 20);
  EXPECT_EQ(config->sources[1].uri, "https://origin.example/models");
  EXPECT_EQ(config->sources[1].min_request.bytes, 8ull << 20);  // default kept
  EXPECT_EQ(config->resync, 90min);
  EXPECT_EQ(config->mode, Mode::kFast);
  EXPECT_EQ(config->priority, 7);
}

TEST(ConfigMapTest, OptionalFieldsKeepDefaults) {
  auto config = LoadConfigString<AgentConfig>("http:\n  port: 80\nmax_fetches:\n", "a.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->http.address, "0.0.0.0");
  EXPECT_EQ(config->http.read_timeout, 30s);
  EXPECT_FALSE(config->http.tls.enabled);
  EXPECT_EQ(config->cache_capacity.bytes, 1ull << 30);
  EXPECT_FALSE(config->max_fetches.has_value());  // empty value counts as absent
  EXPECT_TRUE(config->peers.empty());
  EXPECT_EQ(config->mode, Mode::kSafe);
}

// Each case: the document, then the exact error.
struct ErrorCase {
  std::string_view yaml;
  std::string_view error;
};

class ConfigErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(ConfigErrorTest, ReportsFileLineAndField) {
  const auto config = LoadConfigString<AgentConfig>(GetParam().yaml, "config.yaml");
  ASSERT_FALSE(config) << GetParam().yaml;
  EXPECT_EQ(config.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(config.error().message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConfigErrorTest,
    testing::Values(
        ErrorCase{"http:\n  port: abc\n",
                  "config.yaml:2: field 'http.port': expected an integer in 1..65535, got \"abc\""},
        ErrorCase{"http:\n  port: 70000\n",
                  "config.yaml:2: field 'http.port': expected an integer in 1..65535, got "
                  "\"70000\""},
        ErrorCase{"http:\n  address: x\n",
                  "config.yaml:1: field 'http.port': required field is missing"},
        ErrorCase{"peers: []\n", "config.yaml:1: field 'http': required field is missing"},
        ErrorCase{"", "config.yaml: field 'http': required field is missing"},
        ErrorCase{"http:\n  port: 80\n  prot: 81\n",
                  "config.yaml:3: field 'http.prot': unknown field; expected one of address, "
                  "port, read_timeout, tls"},
        ErrorCase{"http: {port: 80}\ncache_capacity: 10 bananas\n",
                  "config.yaml:2: field 'cache_capacity': expected a byte size such as 256Mi, "
                  "8MiB or 1G, got \"10 bananas\""},
        ErrorCase{"http:\n  port: 80\n  read_timeout: 2h\n",
                  "config.yaml:3: field 'http.read_timeout': expected a duration such as 30s, 5m "
                  "or 250ms (a multiple of 1ms) in 1ms..1h, got \"2h\""},
        ErrorCase{"http:\n  port: 80\n  read_timeout: 1500us\n",
                  "config.yaml:3: field 'http.read_timeout': expected a duration such as 30s, 5m "
                  "or 250ms (a multiple of 1ms) in 1ms..1h, got \"1500us\""},
        ErrorCase{"http:\n  port: 80\n  tls:\n    enabled: yes\n",
                  "config.yaml:4: field 'http.tls.enabled': expected a boolean (true or false), "
                  "got \"yes\""},
        ErrorCase{"http:\n  port: 80\n  tls: true\n",
                  "config.yaml:3: field 'http.tls': expected a map, got \"true\""},
        ErrorCase{"http:\n  port: [80]\n",
                  "config.yaml:2: field 'http.port': expected an integer in 1..65535, got a list"},
        ErrorCase{"http: {port: 80}\npeers: a\n",
                  "config.yaml:2: field 'peers': expected a list, got \"a\""},
        ErrorCase{"http: {port: 80}\npeers:\n  - a\n  - {b: c}\n",
                  "config.yaml:4: field 'peers[1]': expected a string, got a map"},
        ErrorCase{"http: {port: 80}\nadmit_ratio: 1.5\n",
                  "config.yaml:2: field 'admit_ratio': expected a number in 0..1, got \"1.5\""},
        ErrorCase{"http: {port: 80}\nadmit_ratio: .nan\n",
                  "config.yaml:2: field 'admit_ratio': expected a number in 0..1, got \".nan\""},
        ErrorCase{"http: {port: 80}\nmax_fetches: 0\n",
                  "config.yaml:2: field 'max_fetches': expected an integer in 1..4096, got \"0\""},
        ErrorCase{"http: {port: 80}\npriority: 256\n",
                  "config.yaml:2: field 'priority': expected an integer in 0..255, got \"256\""},
        ErrorCase{"http: {port: 80}\nsources:\n  - kind: ftp\n    uri: x\n",
                  "config.yaml:3: field 'sources[0].kind': expected one of s3, http, filesystem, "
                  "got \"ftp\""},
        ErrorCase{"http: {port: 80}\nsources:\n  - kind: s3\n",
                  "config.yaml:3: field 'sources[0].uri': required field is missing"},
        ErrorCase{"http: {port: 80}\nsources:\n  - kind: s3\n    uri: x\n    min_request: 1Ki\n",
                  "config.yaml:5: field 'sources[0].min_request': expected a byte size such as "
                  "256Mi, 8MiB or 1G in 4Ki..1Gi, got \"1Ki\""},
        ErrorCase{"http: {port: 80}\nmode: slow\n",
                  "config.yaml:2: field 'mode': mode must be fast or safe"},
        ErrorCase{"http: {port: 80}\nlabels: {a: 1, b: [2]}\n",
                  "config.yaml:2: field 'labels.b': expected a string, got a list"},
        ErrorCase{"http:\n  port: 80\n  port: 81\n",
                  "config.yaml:3: field 'http.port': duplicate field (first set on line 2)"},
        ErrorCase{"- a\n- b\n", "config.yaml:1: expected a map, got a list"},
        ErrorCase{"just text\n", "config.yaml:1: expected a map, got \"just text\""},
        ErrorCase{"http: {port: 80}\n[a]: b\n", "config.yaml:2: map keys must be plain strings"}));

TEST(ConfigMapTest, LongValuesAreShortenedInErrors) {
  const std::string yaml = "http:\n  port: " + std::string(100, '9') + "\n";
  const auto config = LoadConfigString<AgentConfig>(yaml, "c.yaml");
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().message(),
            "c.yaml:2: field 'http.port': expected an integer in 1..65535, got \"" +
                std::string(64, '9') + "\"... (100 bytes)");
}

TEST(ConfigMapTest, MalformedYamlIsReportedBeforeBinding) {
  const auto config = LoadConfigString<AgentConfig>("http:\n  port: [80\n", "m.yaml");
  ASSERT_FALSE(config);
  EXPECT_TRUE(config.error().message().starts_with("m.yaml:")) << config.error().message();
  EXPECT_NE(config.error().message().find("malformed YAML"), std::string::npos);
}

// Aliases let a few lines expand exponentially; the value budget stops the walk.
TEST(ConfigMapTest, AliasExpansionIsBounded) {
  std::string yaml = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  yaml += "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n";
  yaml += "rows: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n";
  // Bind only "rows" of a document that also holds the anchors.
  auto document = LoadYamlString(yaml, "alias.yaml");
  ASSERT_TRUE(document.has_value());
  ConfigContext context("alias.yaml", /*max_values=*/500);
  ConfigMap map(context, document->root, "", document->root.Mark());
  std::vector<std::vector<std::vector<std::string>>> rows;
  map.Required("rows", rows);
  ASSERT_FALSE(context.ok());
  EXPECT_NE(context.status().error().message().find("expands to more than 500 values"),
            std::string::npos);
}

TEST(ConfigMapTest, CrossFieldChecksUseFail) {
  struct Window {
    int min = 0;
    int max = 0;
  };
  ConfigContext context("w.yaml");
  auto document = LoadYamlString("min: 5\nmax: 2\n", "w.yaml").value();
  ConfigMap map(context, document.root, "window", document.root.Mark());
  Window window;
  map.Required("min", window.min);
  map.Required("max", window.max);
  if (window.min > window.max) map.Fail("min must not exceed max");
  EXPECT_EQ(context.status().error().message(),
            "w.yaml:1: field 'window': min must not exceed max");
}

}  // namespace
}  // namespace modelplane::core
