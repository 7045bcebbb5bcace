// Lower-case hexadecimal: the one codec for digests in names and status, HMACs in peer tokens
// and SigV4 signatures.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace modelplane::core {

// Two lower-case digits per byte.
[[nodiscard]] std::string EncodeHex(std::span<const std::uint8_t> bytes);
[[nodiscard]] std::string EncodeHex(std::string_view bytes);

// Fills `out` from exactly 2 * out.size() digits of either case; false (and `out` unspecified)
// for any other length or a character that is not a hex digit.
[[nodiscard]] bool DecodeHex(std::string_view text, std::span<std::uint8_t> out);

// The value of one hex digit of either case, or -1.
[[nodiscard]] int HexDigitValue(char digit);

}  // namespace modelplane::core
