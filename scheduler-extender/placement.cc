#include "scheduler-extender/placement.h"

#include <algorithm>

#include "scheduler-extender/cache_locality_rule.h"
#include "scheduler-extender/cache_room_rule.h"
#include "scheduler-extender/extender_protocol.h"
#include "scheduler-extender/revoked_revision_rule.h"

namespace modelplane::extender {

Placement::Placement(std::vector<WeightedRule> rules) : rules_(std::move(rules)) {
  std::erase_if(
      rules_, [](const WeightedRule& entry) { return entry.rule == nullptr || entry.weight <= 0; });
}

Placement Placement::Default(const core::Clock& clock) {
  std::vector<WeightedRule> rules;
  rules.push_back({.rule = std::make_unique<RevokedRevisionRule>(), .weight = 1});
  rules.push_back({.rule = std::make_unique<CacheLocalityRule>(), .weight = 1});
  rules.push_back({.rule = std::make_unique<CacheRoomRule>(clock), .weight = 1});
  return Placement(std::move(rules));
}

std::vector<NodeVerdict> Placement::Evaluate(
    const RevisionInfo& revision, std::span<const std::string> nodes,
    std::span<const std::shared_ptr<const NodeCacheInfo>> caches,
    std::span<const NodeHolding> holdings) const {
  std::vector<NodeVerdict> verdicts;
  verdicts.reserve(nodes.size());
  EvaluateInto(revision, nodes, caches, holdings, verdicts);
  return verdicts;
}

void Placement::EvaluateInto(const RevisionInfo& revision, std::span<const std::string> nodes,
                             std::span<const std::shared_ptr<const NodeCacheInfo>> caches,
                             std::span<const NodeHolding> holdings,
                             std::vector<NodeVerdict>& verdicts) const {
  std::vector<const WeightedRule*> rules;
  rules.reserve(rules_.size());
  for (const WeightedRule& entry : rules_) {
    if (entry.rule->AppliesTo(revision)) rules.push_back(&entry);
  }
  const std::size_t digest_hash = std::hash<std::string>{}(revision.digest);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    PrefetchAhead(caches, i);
    const NodeCacheInfo* cache = i < caches.size() ? caches[i].get() : nullptr;
    const bool held_known = i < holdings.size();
    const NodeContext context{.revision = revision,
                              .node = nodes[i],
                              .cache = cache,
                              .held_bytes = held_known ? holdings[i].held_bytes : 0,
                              .entry = held_known ? holdings[i].entry
                                       : cache == nullptr
                                           ? nullptr
                                           : cache->Find(revision.digest, digest_hash)};
    NodeVerdict& verdict = verdicts.emplace_back();
    verdict.node = nodes[i];
    std::int64_t weighted = 0;
    std::int64_t total_weight = 0;  // of the rules that scored this node
    for (const WeightedRule* entry : rules) {
      const RuleVerdict judged = entry->rule->Judge(context);
      if (judged.reason) {
        verdict.passed = false;
        if (!verdict.reason.empty()) verdict.reason += "; ";
        verdict.reason += *judged.reason;
      }
      if (judged.score) {
        weighted +=
            entry->weight * std::clamp(*judged.score, kMinExtenderPriority, kMaxExtenderPriority);
        total_weight += entry->weight;
      }
    }
    // Round half up: (2w + t) / 2t == round(w / t) for non-negative w and positive t.
    const std::int64_t score =
        total_weight == 0 ? 0 : (2 * weighted + total_weight) / (2 * total_weight);
    verdict.score = std::clamp(score, kMinExtenderPriority, kMaxExtenderPriority);
  }
}

}  // namespace modelplane::extender
