// The JSON half of the safetensors header parser: turns the header text into raw tensor
// entries and metadata, enforcing the header's fixed shape as it streams through the text.
//
// A SAX handler rather than a DOM: the shape of a valid header is fixed (an object of objects
// with two arrays of integers), so anything else, including a nesting bomb, is rejected at the
// first out-of-place token, and a 100 MB header never becomes a tree of allocations. Layout
// checks (sizes, offsets, contiguity) are in safetensors_header.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/safetensors/dtype.h"
#include "core/safetensors/safetensors_header.h"

namespace modelplane::core {

struct RawTensorEntry {
  std::string name;
  Dtype dtype = Dtype::kU8;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0;  // relative to the data section
  std::uint64_t end = 0;
};

struct RawHeader {
  std::vector<RawTensorEntry> tensors;  // in header order
  std::map<std::string, std::string> metadata;
};

// `json` must already be valid UTF-8.
[[nodiscard]] Result<RawHeader> ParseHeaderJson(std::string_view json,
                                                const SafetensorsLimits& limits);

// A tensor name or key quoted and escaped for an error message, shortened if very long.
[[nodiscard]] std::string QuoteName(std::string_view name);

}  // namespace modelplane::core
