#include "operator/prestage/prestage_choice.h"

#include <algorithm>
#include <tuple>

namespace modelplane::controller {
namespace {

// The zone label as a map key, made once: PickSpread asks for zones in every comparison and
// every candidate's labels are trimmed to it.
const std::string& ZoneKey() {
  static const std::string key(kZoneLabel);
  return key;
}

const std::string& ZoneOf(const PrestageCandidate& candidate) {
  static const std::string kNoZone;
  const auto zone = candidate.labels.find(ZoneKey());
  return zone == candidate.labels.end() ? kNoZone : zone->second;
}

bool Eligible(const PrestageCandidate& candidate, std::int64_t total_bytes) {
  if (!candidate.ready || candidate.unschedulable) return false;
  if (candidate.held != HeldState::kNone) return true;  // its bytes are already there or reserved
  const std::int64_t free = FreeBytes(candidate);
  return free < 0 || free >= std::max<std::int64_t>(0, total_bytes - candidate.held_bytes);
}

// Smaller is better: ready holders, then staging, then most of its files held, then most free
// space (unknown last), fewest entries, name.
auto PreferenceKey(const PrestageCandidate& candidate) {
  const int held = candidate.held == HeldState::kReady     ? 0
                   : candidate.held == HeldState::kStaging ? 1
                                                           : 2;
  const std::int64_t free = FreeBytes(candidate);
  return std::make_tuple(held, -candidate.held_bytes, free < 0 ? 1 : 0, -free,
                         candidate.assigned_entries, std::string_view(candidate.name));
}

// Greedy zone round-robin: each pick is the most preferred candidate among the zones with the
// fewest picks so far (counting `zone_counts` already made).
std::vector<const PrestageCandidate*> PickSpread(std::vector<const PrestageCandidate*> pool,
                                                 std::size_t wanted,
                                                 std::map<std::string, int>& zone_counts) {
  std::vector<const PrestageCandidate*> picked;
  while (picked.size() < wanted && !pool.empty()) {
    auto best = std::min_element(pool.begin(), pool.end(), [&](const auto* a, const auto* b) {
      return std::make_tuple(zone_counts[ZoneOf(*a)], PreferenceKey(*a)) <
             std::make_tuple(zone_counts[ZoneOf(*b)], PreferenceKey(*b));
    });
    zone_counts[ZoneOf(**best)]++;
    picked.push_back(*best);
    pool.erase(best);
  }
  return picked;
}

}  // namespace

bool MatchesSelector(const std::map<std::string, std::string>& selector,
                     const std::map<std::string, std::string>& labels) {
  return std::all_of(selector.begin(), selector.end(), [&](const auto& requirement) {
    const auto label = labels.find(requirement.first);
    return label != labels.end() && label->second == requirement.second;
  });
}

std::map<std::string, std::string> LabelsPrestageReads(
    const std::map<std::string, std::string>& labels,
    const std::map<std::string, std::string>& node_selector) {
  std::map<std::string, std::string> kept;
  const auto keep = [&](const std::string& key) {
    if (auto label = labels.find(key); label != labels.end()) kept.insert(*label);
  };
  keep(ZoneKey());
  for (const auto& [key, value] : node_selector) keep(key);
  return kept;
}

std::int64_t FreeBytes(const PrestageCandidate& candidate) {
  if (candidate.capacity_bytes <= 0) return -1;
  return std::max<std::int64_t>(0, candidate.capacity_bytes - candidate.used_bytes -
                                       candidate.reserved_bytes - candidate.assigned_bytes);
}

PrestageChoice ChoosePrestageNodes(const PrestageRequest& request,
                                   const std::vector<PrestageCandidate>& candidates) {
  PrestageChoice result;
  if (request.nodes <= 0) return result;
  const auto wanted = static_cast<std::size_t>(request.nodes);

  std::vector<const PrestageCandidate*> kept;
  std::vector<const PrestageCandidate*> fresh;
  for (const PrestageCandidate& candidate : candidates) {
    if (!MatchesSelector(request.node_selector, candidate.labels)) continue;
    const bool eligible = Eligible(candidate, request.total_bytes);
    if (candidate.currently_chosen && (eligible || candidate.held != HeldState::kNone)) {
      kept.push_back(&candidate);
    } else if (eligible) {
      fresh.push_back(&candidate);
    } else {
      ++result.ineligible;
    }
  }

  std::map<std::string, int> zone_counts;
  // Stability first: the kept nodes are chosen before any new one, and when there are more
  // than wanted the same spread-and-preference order decides which stay.
  std::vector<const PrestageCandidate*> chosen = PickSpread(kept, wanted, zone_counts);
  for (const auto* pick : PickSpread(fresh, wanted - chosen.size(), zone_counts)) {
    chosen.push_back(pick);
  }
  for (const auto* pick : chosen) result.chosen.push_back(pick->name);
  std::sort(result.chosen.begin(), result.chosen.end());
  return result;
}

}  // namespace modelplane::controller
