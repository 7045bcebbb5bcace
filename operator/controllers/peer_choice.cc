#include "operator/controllers/peer_choice.h"

#include <algorithm>
#include <array>
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

// The classes, best first.
constexpr int kReadyHere = 0;
constexpr int kStagingHere = 1;
constexpr int kReadyElsewhere = 2;

// Stickiness looks at two groups only: the node's zone (Ready or staging) and elsewhere. Were
// Ready holders in the zone to displace listed staging ones, every node's list would be rebuilt
// from the zone's first Ready holders the pass they outnumber the limit, and stay on them:
// a thousand nodes reading from the same sixteen, each serving two at a time (bench/rollout-sim
// found it: docs/scale.md). Staging peers chosen at the start are a uniform sample of the zone,
// serve each file as soon as they verified it, and become Ready in turn.
int StickyGroup(int rank) {
  return rank == kReadyElsewhere ? 1 : 0;
}

// Whether `candidate` is a better entry of one node than `best`: whole before partial.
bool BetterEntry(const PeerHolder& candidate, const PeerHolder* best) {
  return best == nullptr || (!best->files.empty() && candidate.files.empty());
}

core::api::PeerSource SourceOf(const PeerHolder& holder) {
  std::vector<std::string> files = holder.files;
  std::sort(files.begin(), files.end());
  return {.node = holder.node,
          .endpoint = holder.endpoint,
          .zone = holder.zone,
          .state =
              std::string(holder.ready ? core::api::kPeerStateReady : core::api::kPeerStateStaging),
          .files = std::move(files)};
}

}  // namespace

struct PeerChoice::Ranked {
  int rank;
  std::uint64_t score;
  const PeerHolder* holder;
};

PeerChoice::PeerChoice(const std::vector<PeerHolder>& holders) {
  for (const PeerHolder& holder : holders) {
    if (holder.endpoint.empty() || holder.files.size() > core::api::kMaxPeerFiles) continue;
    NodeEntries& entries = nodes_[holder.node];
    const PeerHolder*& best = holder.ready ? entries.ready : entries.staging;
    if (BetterEntry(holder, best)) best = &holder;
  }
  for (const auto& [node, entries] : nodes_) {
    if (entries.ready != nullptr) {
      zones_[entries.ready->zone].ready.push_back(entries.ready);
      ++ready_nodes_;
    } else {
      zones_[entries.staging->zone].staging.push_back(entries.staging);
    }
  }
}

std::pair<const PeerHolder*, int> PeerChoice::EntryFor(std::string_view holder_node,
                                                       std::string_view zone) const {
  const auto found = nodes_.find(holder_node);
  if (found == nodes_.end()) return {nullptr, 0};
  const NodeEntries& entries = found->second;
  if (entries.ready != nullptr) {
    return {entries.ready, entries.ready->zone == zone ? kReadyHere : kReadyElsewhere};
  }
  if (entries.staging->zone == zone) return {entries.staging, kStagingHere};
  return {nullptr, 0};  // staging elsewhere: a zone reads its origin copy through its own seeder
}

std::vector<core::api::PeerSource> PeerChoice::Choose(
    std::string_view node, std::string_view zone,
    const std::vector<core::api::PeerSource>& previous, std::size_t limit) const {
  if (limit == 0) return {};
  // How many candidates each class holds for this reader (itself left out).
  static const ZoneHolders kNoHolders;
  const auto here = zones_.find(zone);
  const ZoneHolders& local = here != zones_.end() ? here->second : kNoHolders;
  std::array<std::size_t, 3> counts{local.ready.size(), local.staging.size(),
                                    ready_nodes_ - local.ready.size()};
  const auto self = EntryFor(node, zone);
  if (self.first != nullptr) --counts[static_cast<std::size_t>(self.second)];
  const std::size_t total = counts[0] + counts[1] + counts[2];
  // The worst class a fresh choice would take; every candidate when there are no more than fit.
  int worst = kReadyElsewhere;
  if (total > limit) {
    if (counts[0] >= limit) {
      worst = kReadyHere;
    } else if (counts[0] + counts[1] >= limit) {
      worst = kStagingHere;
    }
  }
  const auto better = [](const Ranked& a, const Ranked& b) {
    return std::tuple(a.rank, b.score, a.holder->node) <
           std::tuple(b.rank, a.score, b.holder->node);
  };
  const auto ranked_of = [&](const PeerHolder* holder, int rank) {
    return Ranked{rank, Fnv1a(node, holder->node), holder};
  };
  std::vector<Ranked> chosen;
  // Sticky: peers listed before stay while their group is no worse than the worst a fresh
  // choice would take. When they fill the list, the zone need not be ranked at all.
  std::set<std::string_view> listed;
  if (total > limit) {
    for (const core::api::PeerSource& peer : previous) {
      if (peer.node == node || !listed.insert(peer.node).second) continue;
      const auto [holder, rank] = EntryFor(peer.node, zone);
      if (holder != nullptr && StickyGroup(rank) <= StickyGroup(worst)) {
        chosen.push_back(ranked_of(holder, rank));
      }
    }
  }
  if (chosen.size() < limit) {
    std::vector<Ranked> rest;
    const auto add = [&](const std::vector<const PeerHolder*>& holders, int rank) {
      if (rank > worst) return;
      for (const PeerHolder* holder : holders) {
        if (holder->node == node || listed.contains(holder->node)) continue;
        rest.push_back(ranked_of(holder, rank));
      }
    };
    add(local.ready, kReadyHere);
    add(local.staging, kStagingHere);
    for (const auto& [other_zone, holders] : zones_) {
      if (other_zone != zone) add(holders.ready, kReadyElsewhere);
    }
    const std::size_t wanted = std::min(limit - chosen.size(), rest.size());
    std::partial_sort(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(wanted), rest.end(),
                      better);
    chosen.insert(chosen.end(), rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(wanted));
  }
  std::sort(chosen.begin(), chosen.end(), better);
  if (chosen.size() > limit) chosen.resize(limit);
  std::vector<core::api::PeerSource> peers;
  peers.reserve(chosen.size());
  for (const Ranked& item : chosen) peers.push_back(SourceOf(*item.holder));
  return peers;
}

std::vector<core::api::PeerSource> ChoosePeers(std::string_view node, std::string_view zone,
                                               const std::vector<PeerHolder>& holders,
                                               const std::vector<core::api::PeerSource>& previous,
                                               std::size_t limit) {
  return PeerChoice(holders).Choose(node, zone, previous, limit);
}

}  // namespace modelplane::controller
