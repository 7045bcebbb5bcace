// The classes of revisions eviction never takes (docs/eviction.md): in use (a CSI mount lease,
// or a live pod on this node naming it), reserved (a staging in progress or admitted), pinned
// (a spec entry whose pin has not lapsed), wanted (the node's ModelCache spec lists it), and the
// zone's last Ready copy while the revision's origin looks down. A revision may be in several;
// status lists them all (core/api/model_cache.h kProtection*).
// Thread safety: value types.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_cache.h"

namespace modelplane::agent {

enum class Protection : std::uint8_t {
  kInUse = 1 << 0,
  kReserved = 1 << 1,
  kPinned = 1 << 2,
  kWanted = 1 << 3,
  kLastZoneCopy = 1 << 4,
};

inline constexpr std::array<Protection, 5> kAllProtections = {
    Protection::kInUse, Protection::kReserved, Protection::kPinned, Protection::kWanted,
    Protection::kLastZoneCopy};

[[nodiscard]] constexpr std::string_view ProtectionName(Protection protection) {
  switch (protection) {
    case Protection::kInUse: return core::api::kProtectionInUse;
    case Protection::kReserved: return core::api::kProtectionReserved;
    case Protection::kPinned: return core::api::kProtectionPinned;
    case Protection::kWanted: return core::api::kProtectionWanted;
    case Protection::kLastZoneCopy: return core::api::kProtectionLastZoneCopy;
  }
  return "";
}

class ProtectionSet {
 public:
  constexpr ProtectionSet() = default;
  constexpr ProtectionSet(std::initializer_list<Protection> protections) {
    for (Protection protection : protections) Add(protection);
  }
  constexpr void Add(Protection protection) { bits_ |= static_cast<std::uint8_t>(protection); }
  [[nodiscard]] constexpr bool Has(Protection protection) const {
    return (bits_ & static_cast<std::uint8_t>(protection)) != 0;
  }
  [[nodiscard]] constexpr bool empty() const { return bits_ == 0; }
  // In kAllProtections order, as status lists them.
  [[nodiscard]] std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (Protection protection : kAllProtections) {
      if (Has(protection)) names.emplace_back(ProtectionName(protection));
    }
    return names;
  }
  friend constexpr bool operator==(ProtectionSet, ProtectionSet) = default;

 private:
  std::uint8_t bits_ = 0;
};

}  // namespace modelplane::agent
