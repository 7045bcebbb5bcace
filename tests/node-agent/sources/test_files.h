// Temporary folders and files for the source and manifest tests, removed when the test ends.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>

#include <gtest/gtest.h>

namespace modelplane::agent::testing {

class TempFolder {
 public:
  TempFolder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "modelplane-sources-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] const std::string& path() const { return path_; }

  // Writes `content` at `relative` (parent folders created); returns the full path.
  std::string Write(const std::string& relative, const std::string& content) const {
    const std::filesystem::path full = std::filesystem::path(path_) / relative;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream out(full, std::ios::binary | std::ios::trunc);
    out << content;
    return full.string();
  }

 private:
  std::string path_;
};

// Deterministic bytes that differ at every offset within a 251-byte period.
inline std::string PatternBytes(std::size_t size, unsigned seed = 7) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>((i * 31 + seed) % 251);
  return out;
}

// A 4096-byte-aligned buffer, as the fetch engine hands sources.
struct AlignedBuffer {
  explicit AlignedBuffer(std::size_t length)
      : data(static_cast<std::byte*>(std::aligned_alloc(4096, (length + 4095) / 4096 * 4096))),
        size(length) {}
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(data); }
  [[nodiscard]] std::span<std::byte> span() const { return {data, size}; }
  [[nodiscard]] std::string str() const { return {reinterpret_cast<const char*>(data), size}; }
  std::byte* data;
  std::size_t size;
};

}  // namespace modelplane::agent::testing
