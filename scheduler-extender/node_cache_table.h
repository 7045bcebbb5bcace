// The inventory's ModelCache snapshots by node name, in one flat array (open addressing,
// linear probing) instead of a node-based map: a scheduling request looks up thousands of
// candidate names at once, and with a map each look-up waits for a bucket and then a list node
// scattered over the heap. Here every probe is one slot of a contiguous array whose address is
// known from the name's hash alone, so FindMany asks for the slots (and then the snapshots) a
// few names ahead while it resolves the current one.
// Thread safety: none; CacheInventory guards it with its mutex (many readers or one writer).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "scheduler-extender/cache_inventory.h"

namespace modelplane::extender {

class NodeCacheTable {
 public:
  // Adds the snapshot or replaces the one with the same node name.
  void Upsert(std::shared_ptr<const NodeCacheInfo> cache);
  void Remove(const std::string& node);
  [[nodiscard]] std::shared_ptr<const NodeCacheInfo> Find(const std::string& node) const;
  // One entry per name, in order; null where no snapshot has that name.
  [[nodiscard]] std::vector<std::shared_ptr<const NodeCacheInfo>> FindMany(
      std::span<const std::string> nodes) const;
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::size_t hash = 0;
    std::shared_ptr<const NodeCacheInfo> cache;  // null: empty
  };

  [[nodiscard]] std::size_t Home(std::size_t hash) const { return hash & (slots_.size() - 1); }
  [[nodiscard]] std::size_t Next(std::size_t index) const {
    return (index + 1) & (slots_.size() - 1);
  }
  // The slot holding `node`, or the empty slot where it would go.
  [[nodiscard]] std::size_t Probe(const std::string& node, std::size_t hash) const;
  void Grow();

  std::vector<Slot> slots_;  // a power of two in size, at most half full; empty until used
  std::size_t size_ = 0;
};

}  // namespace modelplane::extender
