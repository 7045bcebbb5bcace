#include "operator/controllers/peer_choice.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>

namespace modelplane::controller {
namespace {

// FNV-1a, 64 bits: stable across processes and restarts, so an operator that restarts chooses
// what the last one chose and rewrites nothing.
std::uint64_t Fnv1a(std::string_view a, std::string_view b) {
  std::uint64_t hash = 14695981039346656037ULL;
  const auto mix = [&hash](std::string_view text) {
    for (const char c : text) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ULL;
    }
  };
  mix(a);
  mix(std::string_view("\0", 1));
  mix(b);
  return hash;
}

}  // namespace

std::vector<core::api::PeerSource> ChoosePeers(std::string_view node, std::string_view zone,
                                               const std::vector<PeerHolder>& holders,
                                               const std::vector<core::api::PeerSource>& previous,
                                               std::size_t limit) {
  struct Ranked {
    int rank;  // 0 Ready here, 1 staging here, 2 Ready elsewhere
    std::uint64_t score;
    const PeerHolder* holder;
  };
  std::vector<Ranked> ranked;
  for (const PeerHolder& holder : holders) {
    if (holder.node == node || holder.endpoint.empty()) continue;
    if (holder.files.size() > core::api::kMaxPeerFiles) continue;
    const bool nearby = holder.zone == zone;
    if (!holder.ready && !nearby) continue;
    const int rank = holder.ready ? (nearby ? 0 : 2) : 1;
    ranked.push_back({rank, Fnv1a(node, holder.node), &holder});
  }
  // A holder listed twice (the revision itself and through another) keeps its best entry:
  // whole before partial, Ready before staging.
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    return std::tuple(a.holder->node, a.rank, !a.holder->files.empty()) <
           std::tuple(b.holder->node, b.rank, !b.holder->files.empty());
  });
  ranked.erase(std::unique(ranked.begin(), ranked.end(),
                           [](const Ranked& a, const Ranked& b) {
                             return a.holder->node == b.holder->node;
                           }),
               ranked.end());
  const auto better = [](const Ranked& a, const Ranked& b) {
    return std::tuple(a.rank, b.score, a.holder->node) <
           std::tuple(b.rank, a.score, b.holder->node);
  };
  std::sort(ranked.begin(), ranked.end(), better);
  if (ranked.size() > limit && limit > 0) {
    // Sticky: the peers listed before stay if their class is no worse than the worst a fresh
    // choice would take; the places left go to the best of the rest.
    const int worst_rank = ranked[limit - 1].rank;
    std::set<std::string_view> listed;
    for (const core::api::PeerSource& peer : previous) listed.insert(peer.node);
    std::vector<Ranked> kept;
    std::vector<Ranked> rest;
    for (const Ranked& item : ranked) {
      const bool stays = listed.contains(item.holder->node) && item.rank <= worst_rank;
      (stays && kept.size() < limit ? kept : rest).push_back(item);
    }
    for (const Ranked& item : rest) {
      if (kept.size() >= limit) break;
      kept.push_back(item);
    }
    std::sort(kept.begin(), kept.end(), better);
    ranked = std::move(kept);
  }
  std::vector<core::api::PeerSource> chosen;
  for (const Ranked& item : ranked) {
    if (chosen.size() >= limit) break;
    std::vector<std::string> files = item.holder->files;
    std::sort(files.begin(), files.end());
    chosen.push_back({.node = item.holder->node,
                      .endpoint = item.holder->endpoint,
                      .zone = item.holder->zone,
                      .state = std::string(item.holder->ready ? core::api::kPeerStateReady
                                                              : core::api::kPeerStateStaging),
                      .files = std::move(files)});
  }
  return chosen;
}

}  // namespace modelplane::controller
