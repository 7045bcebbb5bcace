// The seam for placement rules: each rule looks at one candidate node for one revision and may
// rule the node out (filter) and give it a score (prioritize). Placement (placement.h) runs the
// rules and combines them. The first rule is cache locality (cache_locality_rule.h); the later
// ones (a peer holding the revision in the same zone, media and eviction pressure) add fields to
// NodeContext and a class here, and change nothing else.
// Thread safety: rules are immutable after construction and called from many threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "scheduler-extender/cache_inventory.h"

namespace modelplane::extender {

// Everything a rule may look at for one (revision, node) pair.
struct NodeContext {
  const RevisionInfo& revision;
  std::string_view node;
  const NodeCacheInfo* cache = nullptr;  // null: the node has no ModelCache (capacity unknown)
  // Bytes of the revision's files the node holds through other revisions Ready there.
  std::int64_t held_bytes = 0;
  // The cache's entry for the revision's digest (null: none) when Placement looked it up once
  // for all rules; unset, HeldEntry looks it up.
  std::optional<const CachedRevisionInfo*> entry;
};

// What the node's cache says about the revision's digest; null without a cache or an entry.
[[nodiscard]] inline const CachedRevisionInfo* HeldEntry(const NodeContext& context) {
  if (context.entry) return *context.entry;
  return context.cache == nullptr ? nullptr : context.cache->Find(context.revision.digest);
}

// One rule's answer about one node.
struct RuleVerdict {
  // Why the node cannot take the revision; nullopt when it can.
  std::optional<std::string> reason;
  // 0 (worst) to 10 (best), kube-scheduler's extender priority range; nullopt when the rule
  // does not rank nodes (a filter-only rule), so it does not dilute the others' scores.
  std::optional<std::int64_t> score;
};

class PlacementRule {
 public:
  virtual ~PlacementRule() = default;

  [[nodiscard]] virtual std::string_view Name() const = 0;
  // False when the rule has nothing to say about any node for this revision (the revoked rule
  // for a revision that is not revoked): Placement then skips it for the whole request.
  [[nodiscard]] virtual bool AppliesTo(const RevisionInfo& /*revision*/) const { return true; }
  // Filter and score at once: one call per node and rule, and what both need is worked out
  // once.
  [[nodiscard]] virtual RuleVerdict Judge(const NodeContext& context) const = 0;

  // The two halves of Judge, for callers that want one.
  [[nodiscard]] std::optional<std::string> Filter(const NodeContext& context) const {
    return Judge(context).reason;
  }
  [[nodiscard]] std::optional<std::int64_t> Score(const NodeContext& context) const {
    return Judge(context).score;
  }
};

}  // namespace modelplane::extender
