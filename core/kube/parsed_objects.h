// Typed forms of an informer's objects, parsed once per object version and kept while the
// informer's store holds that version. The operator's ModelRevision reconcile reads every Node
// and every ModelCache (placement candidates, rollouts, gates), and its admission pass every
// ModelRevision and ModelCache every two seconds; parsing all of them again each time was most
// of the operator's CPU with 1,000 revisions on 500 nodes (docs/benchmarks.md, "Operator at
// scale").
//
// The store never mutates an object: an update replaces its shared_ptr. So an entry is valid
// exactly while the object it was parsed from is alive, which a weak_ptr tells; expired entries
// are swept once the map holds twice as many entries as at the last sweep, so it stays bounded
// by about twice the objects alive.
// Thread safety: Get may be called from any thread; parsing runs outside the lock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/error/error.h"
#include "core/kube/object_store.h"

namespace modelplane::core {

template <typename T>
class ParsedObjects {
 public:
  using Parsed = std::shared_ptr<const Result<T>>;
  using Parse = std::function<Result<T>(const nlohmann::json&)>;

  explicit ParsedObjects(Parse parse) : parse_(std::move(parse)) {}

  // The parse of exactly this object (the pointer the store handed out); never null.
  [[nodiscard]] Parsed Get(const ObjectPtr& object) {
    {
      const std::lock_guard lock(mutex_);
      const auto found = entries_.find(object.get());
      // Not expired means the same object: its address cannot be reused while it lives.
      if (found != entries_.end() && !found->second.source.expired()) return found->second.parsed;
    }
    auto parsed = std::make_shared<const Result<T>>(parse_(*object));
    const std::lock_guard lock(mutex_);
    entries_[object.get()] = {.source = object, .parsed = parsed};
    if (entries_.size() >= sweep_at_) {
      std::erase_if(entries_, [](const auto& entry) { return entry.second.source.expired(); });
      sweep_at_ = std::max(kMinSweep, 2 * entries_.size());
    }
    return parsed;
  }

 private:
  static constexpr std::size_t kMinSweep = 1024;

  struct Entry {
    std::weak_ptr<const nlohmann::json> source;
    Parsed parsed;
  };

  const Parse parse_;
  std::mutex mutex_;
  std::unordered_map<const nlohmann::json*, Entry> entries_;
  std::size_t sweep_at_ = kMinSweep;
};

}  // namespace modelplane::core
