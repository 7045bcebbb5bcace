// Placement: runs the placement rules over every candidate node for one revision and combines
// them into a filter verdict and a 0..10 score per node. Pure: the same inputs give the same
// verdicts, so it is tested without servers or clusters.
//
// A node fails the filter when any rule rules it out (the reasons are joined). Its score is the
// weighted mean of the scores of the rules that rank nodes, rounded to the nearest integer and
// clamped to 0..10, so adding a rule never pushes a node out of kube-scheduler's extender range
// and a filter-only rule does not dilute the others.
// Thread safety: immutable after construction; Evaluate may run on many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/clock/clock.h"
#include "scheduler-extender/cache_inventory.h"
#include "scheduler-extender/placement_rule.h"

namespace modelplane::extender {

struct WeightedRule {
  std::unique_ptr<PlacementRule> rule;
  std::int64_t weight = 1;  // > 0
};

struct NodeVerdict {
  std::string node;
  bool passed = true;
  std::string reason;  // why it failed; empty when it passed
  std::int64_t score = 0;
};

class Placement {
 public:
  explicit Placement(std::vector<WeightedRule> rules);
  // The rules modelplane uses today: revoked revisions are placed nowhere; cache locality;
  // room in the cache, and what making it would evict.
  [[nodiscard]] static Placement Default(const core::Clock& clock);

  // One verdict per node, in order; caches[i] belongs to nodes[i] (null: no ModelCache), and
  // holdings[i], when given, is what nodes[i] holds of the revision (CacheInventory::Holdings);
  // without them a node holds none of its files through other revisions and its entry is
  // looked up in its cache.
  [[nodiscard]] std::vector<NodeVerdict> Evaluate(
      const RevisionInfo& revision, std::span<const std::string> nodes,
      std::span<const std::shared_ptr<const NodeCacheInfo>> caches,
      std::span<const NodeHolding> holdings = {}) const;
  // The same, appended to `verdicts`.
  void EvaluateInto(const RevisionInfo& revision, std::span<const std::string> nodes,
                    std::span<const std::shared_ptr<const NodeCacheInfo>> caches,
                    std::span<const NodeHolding> holdings,
                    std::vector<NodeVerdict>& verdicts) const;

 private:
  std::vector<WeightedRule> rules_;
};

}  // namespace modelplane::extender
