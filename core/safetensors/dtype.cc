#include "core/safetensors/dtype.h"

#include <array>

namespace modelplane::core {
namespace {

struct DtypeEntry {
  Dtype dtype;
  std::string_view name;
  std::uint32_t bits;
};

constexpr std::array<DtypeEntry, 22> kDtypes = {{
    {Dtype::kBool, "BOOL", 8},
    {Dtype::kF4, "F4", 4},
    {Dtype::kF6E2M3, "F6_E2M3", 6},
    {Dtype::kF6E3M2, "F6_E3M2", 6},
    {Dtype::kU8, "U8", 8},
    {Dtype::kI8, "I8", 8},
    {Dtype::kF8E5M2, "F8_E5M2", 8},
    {Dtype::kF8E4M3, "F8_E4M3", 8},
    {Dtype::kF8E8M0, "F8_E8M0", 8},
    {Dtype::kI16, "I16", 16},
    {Dtype::kU16, "U16", 16},
    {Dtype::kF16, "F16", 16},
    {Dtype::kBF16, "BF16", 16},
    {Dtype::kI32, "I32", 32},
    {Dtype::kU32, "U32", 32},
    {Dtype::kF32, "F32", 32},
    {Dtype::kC64, "C64", 64},
    {Dtype::kF64, "F64", 64},
    {Dtype::kI64, "I64", 64},
    {Dtype::kU64, "U64", 64},
    {Dtype::kF8E4M3Fnuz, "F8_E4M3FNUZ", 8},
    {Dtype::kF8E5M2Fnuz, "F8_E5M2FNUZ", 8},
}};

const DtypeEntry& EntryOf(Dtype dtype) {
  return kDtypes[static_cast<std::size_t>(dtype)];
}

}  // namespace

std::optional<Dtype> ParseDtype(std::string_view name) {
  for (const DtypeEntry& entry : kDtypes) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

std::string_view DtypeName(Dtype dtype) {
  return EntryOf(dtype).name;
}

std::uint32_t DtypeBits(Dtype dtype) {
  return EntryOf(dtype).bits;
}

}  // namespace modelplane::core
