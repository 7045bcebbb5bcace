// The possession tests' fixture: a real CacheStore in a temporary folder holding the verified
// bytes, and folders that real shared filesystem sources serve as a revision's own sources.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/digest/sha256.h"
#include "node-agent/sources/shared_filesystem_range_source.h"
#include "node-agent/store/cache_store.h"
#include "tests/node-agent/csi/staged_revision.h"

namespace modelplane::agent::testing {

class PossessionFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() /
            fmt::format("possession-test-{}-{}", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(base_);
    std::filesystem::create_directories(base_);
    auto store = CacheStore::Open({.root = base_ / "cache", .headroom_bytes = 0});
    ASSERT_TRUE(store) << store.error().ToString();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(base_, ignored);
  }

  // The node's verified copy of `content`, as if staged for another revision.
  void Hold(const std::string& path, const std::string& content) {
    ASSERT_TRUE(StageRevision(*store_, {{path, content}}, core::Sha256Of(path + content),
                              "other/revision"));
  }

  // Writes `content` as `path` below the source folder `folder` (made if needed).
  void Serve(const std::string& folder, const std::string& path, const std::string& content) {
    const std::filesystem::path file = base_ / folder / path;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
  }

  std::unique_ptr<SharedFilesystemRangeSource> Source(const std::string& folder) {
    std::filesystem::create_directories(base_ / folder);
    auto source =
        SharedFilesystemRangeSource::Create({.name = folder, .root = (base_ / folder).string()});
    EXPECT_TRUE(source) << source.error().ToString();
    return source ? std::move(*source) : nullptr;
  }

  static SourceFile File(const std::string& path, const std::string& content) {
    return {.path = path, .sha256 = core::Sha256Of(content), .size = content.size()};
  }

  static std::string Bytes(std::size_t size, unsigned seed) {
    std::string bytes(size, '\0');
    std::uint32_t state = seed * 2654435761u + 1;
    for (char& c : bytes) {
      state = state * 1664525u + 1013904223u;
      c = static_cast<char>(state >> 24);
    }
    return bytes;
  }

  std::filesystem::path base_;
  std::unique_ptr<CacheStore> store_;
};

}  // namespace modelplane::agent::testing
