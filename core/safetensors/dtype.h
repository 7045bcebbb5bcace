// The element types a safetensors file may declare, with their sizes in bits.
//
// The list is the one the Python `safetensors` package (Rust crate `safetensors::Dtype`) accepts
// today, including the sub-byte float formats (F4, F6_*) and the F8 scale type F8_E8M0. Anything
// else in a header is rejected rather than guessed at: a wrong element size would make every
// offset after it wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace modelplane::core {

enum class Dtype : std::uint8_t {
  kBool,
  kF4,      // float4 e2m1, two per byte
  kF6E2M3,  // float6, four per three bytes
  kF6E3M2,
  kU8,
  kI8,
  kF8E5M2,
  kF8E4M3,
  kF8E8M0,  // power-of-two scales (MX formats)
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kC64,  // complex of two F32
  kF64,
  kI64,
  kU64,
  kF8E4M3Fnuz,  // AMD's F8 variants (no negative zero, one NaN); safetensors 0.8 writes them
  kF8E5M2Fnuz,
};

// Exact, case-sensitive names as written in headers ("BF16", "F8_E4M3").
[[nodiscard]] std::optional<Dtype> ParseDtype(std::string_view name);
[[nodiscard]] std::string_view DtypeName(Dtype dtype);
[[nodiscard]] std::uint32_t DtypeBits(Dtype dtype);

}  // namespace modelplane::core
