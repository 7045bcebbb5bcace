#include "core/config/config_loader.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

struct ServerConfig {
  std::string name;
  int workers = 4;
};

void BindConfig(ConfigMap& map, ServerConfig& config) {
  map.Required("name", config.name);
  map.Optional("workers", config.workers, InRange(1, 64));
}

class ConfigLoaderTest : public testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }

  std::string Write(std::string_view content) {
    std::ofstream file(path_);
    file << content;
    return path_.string();
  }

  std::filesystem::path path_ = std::filesystem::path(MODELPLANE_BINARY_DIR) /
                                ("config_loader_test_" + std::to_string(::getpid()) + ".yaml");
};

TEST_F(ConfigLoaderTest, LoadsAFile) {
  auto config = LoadConfigFile<ServerConfig>(Write("name: agent\nworkers: 8\n"));
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->name, "agent");
  EXPECT_EQ(config->workers, 8);
}

TEST_F(ConfigLoaderTest, ErrorsNameTheFilePath) {
  const std::string path = Write("name: agent\n\n# comment\nworkers: 100\n");
  const auto config = LoadConfigFile<ServerConfig>(path);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().message(),
            path + ":4: field 'workers': expected an integer in 1..64, got \"100\"");
}

TEST_F(ConfigLoaderTest, MissingFileIsNotFound) {
  const auto config = LoadConfigFile<ServerConfig>(path_.string());
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().code(), ErrorCode::kNotFound);
}

TEST_F(ConfigLoaderTest, LimitsApplyToFiles) {
  const std::string path = Write("name: " + std::string(2000, 'x') + "\n");
  const auto config = LoadConfigFile<ServerConfig>(path, {.max_bytes = 1024});
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message().find("larger than the limit of 1024 bytes"),
            std::string::npos);
}

}  // namespace
}  // namespace modelplane::core
