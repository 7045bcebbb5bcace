// A strict parser for the header of a safetensors file: which tensors it holds and where.
//
// Layout: 8-byte little-endian header length N, N bytes of UTF-8 JSON, then the data section.
// The JSON maps tensor names to {dtype, shape, data_offsets: [begin, end]} (offsets relative to
// the data section) plus an optional "__metadata__" string-to-string map. Headers come from
// untrusted sources (any peer or bucket), so every rule is checked and every violation is an
// Error, never a crash: N at most 100,000,000; valid UTF-8; known dtypes only; no duplicate
// keys; shapes and offsets computed with overflow checks; each tensor's byte range matching
// its shape and dtype; ranges contiguous, without holes or overlaps, covering the data section
// exactly as far as the file size says. Nothing outside the header is read.
//
// Thread safety: the functions are reentrant; a SafetensorsHeader is an immutable value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error/error.h"
#include "core/safetensors/dtype.h"

namespace modelplane::core {

inline constexpr std::uint64_t kSafetensorsLengthPrefixBytes = 8;
inline constexpr std::uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

struct SafetensorsLimits {
  std::uint64_t max_header_bytes = kSafetensorsMaxHeaderBytes;
  std::size_t max_tensors = 1'000'000;
  std::size_t max_rank = 32;
};

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::kU8;
  std::vector<std::uint64_t> shape;
  // Absolute offsets in the file: [data_begin, data_end).
  std::uint64_t data_begin = 0;
  std::uint64_t data_end = 0;

  [[nodiscard]] std::uint64_t ByteSize() const { return data_end - data_begin; }
  friend bool operator==(const TensorInfo&, const TensorInfo&) = default;
};

struct SafetensorsHeader {
  std::uint64_t header_bytes = 0;  // N, the JSON length
  std::uint64_t data_start = 0;    // 8 + N, where the data section begins
  std::uint64_t file_size = 0;
  std::vector<TensorInfo> tensors;  // in file order (by data_begin)
  std::map<std::string, std::string> metadata;

  // nullptr when there is no such tensor.
  [[nodiscard]] const TensorInfo* Find(std::string_view name) const;

 private:
  friend class SafetensorsHeaderBuilder;
  std::unordered_map<std::string, std::size_t> index_;
};

// Decodes the 8-byte length prefix and checks it against the limit and the file size: what a
// streaming reader calls before fetching the header bytes.
[[nodiscard]] Result<std::uint64_t> ParseSafetensorsHeaderLength(
    std::span<const std::byte> prefix, std::uint64_t file_size,
    const SafetensorsLimits& limits = {});

// `file_prefix` starts at byte 0 of the file and holds at least 8 + N bytes (more is ignored);
// `file_size` is the size of the whole file.
[[nodiscard]] Result<SafetensorsHeader> ParseSafetensorsHeader(
    std::span<const std::byte> file_prefix, std::uint64_t file_size,
    const SafetensorsLimits& limits = {});

// Reads only the length prefix and the header from a file.
[[nodiscard]] Result<SafetensorsHeader> ReadSafetensorsHeader(const std::string& path,
                                                              const SafetensorsLimits& limits = {});

}  // namespace modelplane::core
