// The sources of one fetch, in the order they were added, which may grow while the fetch runs:
// peers that start staging the same files, or finish them, are added by the node's control loop
// and read by the running fetch at its next choice. Append-only, so an index names one source
// for the fetch's life, and a source lives as long as the set.
//
// Thread safety: Add, size and at may be called from any thread at once.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "node-agent/fetch/range_source.h"

namespace modelplane::agent {

class SourceSet {
 public:
  SourceSet() = default;
  explicit SourceSet(std::vector<std::unique_ptr<RangeSource>> sources)
      : sources_(std::move(sources)) {}
  SourceSet(const SourceSet&) = delete;
  SourceSet& operator=(const SourceSet&) = delete;

  // Returns the new source's index.
  std::size_t Add(std::unique_ptr<RangeSource> source) {
    std::lock_guard lock(mutex_);
    sources_.push_back(std::move(source));
    return sources_.size() - 1;
  }
  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(mutex_);
    return sources_.size();
  }
  // `index` < size(); the reference stays valid for the set's life.
  [[nodiscard]] RangeSource& at(std::size_t index) const {
    std::lock_guard lock(mutex_);
    return *sources_[index];
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<RangeSource>> sources_;
};

}  // namespace modelplane::agent
