#include "scheduler-extender/node_cache_table.h"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

namespace modelplane::extender {
namespace {

constexpr std::size_t kInitialSlots = 64;
// How many names ahead FindMany asks for a slot, and for the snapshot a slot points to: far
// enough to hide a miss to memory behind the work on the names in between.
constexpr std::size_t kSlotDistance = 8;
constexpr std::size_t kSnapshotDistance = 4;

// A node name's hash: 8 bytes at a time, each word mixed in with a multiply, then murmur3's
// finalizer, so that the low bits (which pick the home slot) depend on every byte. A request
// hashes every candidate's name, and std::hash's byte-wise tail and call were a tenth of a
// 5,000-candidate decision's instructions.
std::size_t HashOf(std::string_view node) {
  constexpr std::uint64_t kMultiplier = 0xff51afd7ed558ccdULL;
  std::uint64_t hash = 0x9e3779b97f4a7c15ULL ^ node.size();
  const auto mix_in = [&](std::uint64_t word) {
    hash = (hash ^ word) * kMultiplier;
    hash ^= hash >> 32;
  };
  constexpr std::size_t kWord = sizeof(std::uint64_t);
  const auto word_at = [&](std::size_t at) {
    std::uint64_t word = 0;
    std::memcpy(&word, node.data() + at, kWord);  // a fixed size: one load, no call
    return word;
  };
  if (node.size() < kWord) {
    std::uint64_t word = 0;
    for (const char c : node) word = word << 8 | static_cast<unsigned char>(c);
    mix_in(word);
  } else {
    std::size_t at = 0;
    for (; at + kWord <= node.size(); at += kWord) mix_in(word_at(at));
    // The tail as the last whole word, which overlaps the one before.
    if (at < node.size()) mix_in(word_at(node.size() - kWord));
  }
  hash ^= hash >> 33;
  hash *= kMultiplier;
  hash ^= hash >> 33;
  hash *= 0xc4ceb9fe1a85ec53ULL;
  hash ^= hash >> 33;
  return static_cast<std::size_t>(hash);
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
