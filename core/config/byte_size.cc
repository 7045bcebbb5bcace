#include "core/config/byte_size.h"

#include <array>
#include <limits>

#include <fmt/format.h>

#include "core/config/decimal_number.h"

namespace modelplane::core {
namespace {

struct ByteUnit {
  std::string_view name;
  std::uint64_t multiplier;
};

constexpr std::uint64_t kKi = 1024;
constexpr std::uint64_t kK = 1000;

constexpr std::array<ByteUnit, 28> kByteUnits = {{
    {"", 1},
    {"B", 1},
    {"k", kK},
    {"K", kK},
    {"kB", kK},
    {"KB", kK},
    {"M", kK* kK},
    {"MB", kK* kK},
    {"G", kK* kK* kK},
    {"GB", kK* kK* kK},
    {"T", kK* kK* kK* kK},
    {"TB", kK* kK* kK* kK},
    {"P", kK* kK* kK* kK* kK},
    {"PB", kK* kK* kK* kK* kK},
    {"E", kK* kK* kK* kK* kK* kK},
    {"EB", kK* kK* kK* kK* kK* kK},
    {"Ki", kKi},
    {"KiB", kKi},
    {"Mi", kKi* kKi},
    {"MiB", kKi* kKi},
    {"Gi", kKi* kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"Ti", kKi* kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
    {"Pi", kKi* kKi* kKi* kKi* kKi},
    {"PiB", kKi* kKi* kKi* kKi* kKi},
    {"Ei", kKi* kKi* kKi* kKi* kKi* kKi},
    {"EiB", kKi* kKi* kKi* kKi* kKi* kKi},
}};

}  // namespace

Result<std::uint64_t> ParseByteSize(std::string_view text) {
  const auto invalid = [&](std::string_view why) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("invalid byte size {:?}: {}", text, why));
  };
  const auto number = ParseDecimalPrefix(text);
  if (!number) return invalid("expected a number such as 256Mi, 8MiB or 1G");
  const std::string_view unit_name = text.substr(number->length);
  for (const ByteUnit& unit : kByteUnits) {
    if (unit.name != unit_name) continue;
    const auto bytes = number->Scale(unit.multiplier, std::numeric_limits<std::uint64_t>::max());
    if (!bytes) return invalid("too large");
    return *bytes;
  }
  return invalid(
      "unknown unit; use B, k, M, G, T, P, E or Ki, Mi, Gi, Ti, Pi, Ei (optionally with B)");
}

std::string FormatByteSize(std::uint64_t bytes) {
  constexpr std::array<ByteUnit, 6> kBinary = {{{"Ei", kKi * kKi * kKi * kKi * kKi * kKi},
                                                {"Pi", kKi * kKi * kKi * kKi * kKi},
                                                {"Ti", kKi * kKi * kKi * kKi},
                                                {"Gi", kKi * kKi * kKi},
                                                {"Mi", kKi * kKi},
                                                {"Ki", kKi}}};
  if (bytes != 0) {
    for (const ByteUnit& unit : kBinary) {
      if (bytes % unit.multiplier == 0)
        return fmt::format("{}{}", bytes / unit.multiplier, unit.name);
    }
  }
  return fmt::format("{}", bytes);
}

}  // namespace modelplane::core
