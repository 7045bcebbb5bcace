// The two writes the plugin makes, both JSON merge patches (RFC 7386) on a ModelRevision's
// spec, and what it tells the user afterwards. The CRD allows both in place: spec.prestage has
// no transition rule, and spec.revoked may go from false to true only (a CEL rule refuses
// clearing it).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace modelplane::cli {

inline constexpr std::int32_t kMaxPrestageNodes = 10000;  // the CRD's maximum

// {"spec": {"prestage": {"nodes": N}}}: the node selector, if any, stays.
[[nodiscard]] nlohmann::json PrestagePatch(std::int32_t nodes);
// {"spec": {"revoked": true}}.
[[nodiscard]] nlohmann::json RevokePatch();

// What changed and how to follow it. `before` and `after` are the object read before the patch
// and returned by it.
[[nodiscard]] std::string PrestageSummary(const nlohmann::json& before,
                                          const nlohmann::json& after);
// `already`: the revision was revoked before this call (nothing was written).
[[nodiscard]] std::string RevokeSummary(const nlohmann::json& after, bool already);

}  // namespace modelplane::cli
