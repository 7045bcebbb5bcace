#include "scheduler-extender/node_cache_table.h"

#include <functional>
#include <utility>

namespace modelplane::extender {
namespace {

constexpr std::size_t kInitialSlots = 64;
// How many names ahead FindMany asks for a slot, and for the snapshot a slot points to: far
// enough to hide a miss to memory behind the work on the names in between.
constexpr std::size_t kSlotDistance = 8;
constexpr std::size_t kSnapshotDistance = 4;

std::size_t HashOf(const std::string& node) {
  return std::hash<std::string>{}(node);
}

}  // namespace

std::size_t NodeCacheTable::Probe(const std::string& node, std::size_t hash) const {
  std::size_t index = Home(hash);
  while (slots_[index].cache && (slots_[index].hash != hash || slots_[index].cache->node != node)) {
    index = Next(index);
  }
  return index;
}

void NodeCacheTable::Grow() {
  std::vector<Slot> old =
      std::exchange(slots_, std::vector<Slot>(slots_.empty() ? kInitialSlots : slots_.size() * 2));
  for (Slot& slot : old) {
    if (!slot.cache) continue;
    std::size_t index = Home(slot.hash);
    while (slots_[index].cache) index = Next(index);
    slots_[index] = std::move(slot);
  }
}

void NodeCacheTable::Upsert(std::shared_ptr<const NodeCacheInfo> cache) {
  if (!cache) return;
  if (2 * (size_ + 1) > slots_.size()) Grow();
  const std::size_t hash = HashOf(cache->node);
  Slot& slot = slots_[Probe(cache->node, hash)];
  if (!slot.cache) ++size_;
  slot = {.hash = hash, .cache = std::move(cache)};
}

void NodeCacheTable::Remove(const std::string& node) {
  if (slots_.empty()) return;
  std::size_t hole = Probe(node, HashOf(node));
  if (!slots_[hole].cache) return;
  slots_[hole] = {};
  --size_;
  // Backward-shift deletion: move each later entry of the run into the hole when the hole
  // lies on its way from its home slot, so that no probe ever stops early at the hole.
  for (std::size_t index = Next(hole); slots_[index].cache; index = Next(index)) {
    const std::size_t home = Home(slots_[index].hash);
    const bool hole_on_its_way =
        hole <= index ? (home <= hole || home > index) : (home <= hole && home > index);
    if (hole_on_its_way) {
      slots_[hole] = std::move(slots_[index]);
      slots_[index] = {};
      hole = index;
    }
  }
}

std::shared_ptr<const NodeCacheInfo> NodeCacheTable::Find(const std::string& node) const {
  if (slots_.empty()) return nullptr;
  return slots_[Probe(node, HashOf(node))].cache;
}

std::vector<std::shared_ptr<const NodeCacheInfo>> NodeCacheTable::FindMany(
    std::span<const std::string> nodes) const {
  std::vector<std::shared_ptr<const NodeCacheInfo>> out;
  out.reserve(nodes.size());
  if (slots_.empty()) {
    out.resize(nodes.size());
    return out;
  }
  std::vector<std::size_t> hashes(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) hashes[i] = HashOf(nodes[i]);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i + kSlotDistance < nodes.size()) {
      __builtin_prefetch(&slots_[Home(hashes[i + kSlotDistance])]);
    }
    if (i + kSnapshotDistance < nodes.size()) {
      // Its slot was asked for kSlotDistance - kSnapshotDistance names ago.
      if (const auto& ahead = slots_[Home(hashes[i + kSnapshotDistance])].cache) {
        __builtin_prefetch(ahead.get());
      }
    }
    out.push_back(slots_[Probe(nodes[i], hashes[i])].cache);
  }
  return out;
}

}  // namespace modelplane::extender
