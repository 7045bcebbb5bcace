// Random, YAML-flavoured inputs must always come back as a value or a clean error: no crash,
// no exception, no hang. A cheap stand-in for the fuzzer until one is wired up for configs.
#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "core/config/byte_size.h"
#include "core/config/config_loader.h"
#include "core/config/duration.h"

namespace modelplane::core {
namespace {

struct Anything {
  std::string name;
  std::vector<std::map<std::string, std::string>> items;
  std::chrono::nanoseconds wait{0};
};

void BindConfig(ConfigMap& map, Anything& config) {
  map.Optional("name", config.name);
  map.Optional("items", config.items);
  map.Optional("wait", config.wait);
}

std::string RandomText(std::mt19937& random, std::string_view alphabet, std::size_t max_length) {
  std::uniform_int_distribution<std::size_t> length(0, max_length);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string text(length(random), ' ');
  for (char& c : text) c = alphabet[pick(random)];
  return text;
}

TEST(YamlRobustnessTest, RandomDocumentsNeverCrash) {
  std::mt19937 random(20261129);
  constexpr std::string_view kAlphabet = "ab: -[]{},'\"\n\n  #&*!|>?%@`\\\t1.0~";
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string text = RandomText(random, kAlphabet, 200);
    const auto config = LoadConfigString<Anything>(text, "random.yaml");
    if (config) {
      ++accepted;
    } else {
      EXPECT_TRUE(config.error().message().starts_with("random.yaml")) << config.error().message();
    }
  }
  EXPECT_GT(accepted, 0);  // the generator does produce some valid documents
}

TEST(YamlRobustnessTest, RandomScalarsNeverCrashTheUnitParsers) {
  std::mt19937 random(7);
  constexpr std::string_view kAlphabet = "0123456789.smhunKMGTPEiB\xC2\xB5 -+";
  for (int i = 0; i < 20000; ++i) {
    const std::string text = RandomText(random, kAlphabet, 24);
    (void)ParseDuration(text);
    (void)ParseByteSize(text);
  }
}

}  // namespace
}  // namespace modelplane::core
