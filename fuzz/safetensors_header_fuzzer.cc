// libFuzzer target: arbitrary bytes as the start of a safetensors file.
//
// The first 8 bytes of input choose the claimed file size (so the fuzzer explores truncation
// and trailing data without allocating the data section); the rest is the file prefix. Any
// crash, sanitizer report or accepted header that breaks the layout invariants is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "core/safetensors/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using modelplane::core::ParseSafetensorsHeader;
  if (size < 8) return 0;
  std::uint64_t extra = 0;
  std::memcpy(&extra, data, sizeof(extra));
  const std::span<const std::byte> prefix(reinterpret_cast<const std::byte*>(data + 8), size - 8);
  // Mostly small data sections so valid headers are reachable, sometimes huge ones.
  const std::uint64_t file_size = prefix.size() + ((extra >> 63) != 0 ? extra : extra % 4096);
  if (file_size < prefix.size()) return 0;  // wrapped

  auto header = ParseSafetensorsHeader(prefix, file_size, {.max_tensors = 10000});
  if (!header) return 0;
  // Invariants of an accepted header.
  std::uint64_t expected = header->data_start;
  for (const auto& tensor : header->tensors) {
    if (tensor.data_begin != expected || tensor.data_end < tensor.data_begin) std::abort();
    if (header->Find(tensor.name) == nullptr) std::abort();
    expected = tensor.data_end;
  }
  if (expected != header->file_size) std::abort();
  if (header->data_start != 8 + header->header_bytes) std::abort();
  return 0;
}
