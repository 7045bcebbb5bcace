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
    std::span<const std::int64_t> held_bytes) const {
  std::vector<NodeVerdict> verdicts;
  verdicts.reserve(nodes.size());
  const std::size_t digest_hash = std::hash<std::string>{}(revision.digest);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    PrefetchAhead(caches, i);
    const NodeCacheInfo* cache = i < caches.size() ? caches[i].get() : nullptr;
    const NodeContext context{
        .revision = revision,
        .node = nodes[i],
        .cache = cache,
        .held_bytes = i < held_bytes.size() ? held_bytes[i] : 0,
        .entry = cache == nullptr ? nullptr : cache->Find(revision.digest, digest_hash)};
    NodeVerdict verdict{.node = nodes[i]};
    std::int64_t weighted = 0;
    std::int64_t total_weight = 0;  // of the rules that scored this node
    for (const WeightedRule& entry : rules_) {
      if (auto reason = entry.rule->Filter(context)) {
        verdict.passed = false;
        if (!verdict.reason.empty()) verdict.reason += "; ";
        verdict.reason += *reason;
      }
      if (const auto score = entry.rule->Score(context)) {
        weighted += entry.weight * std::clamp(*score, kMinExtenderPriority, kMaxExtenderPriority);
        total_weight += entry.weight;
      }
    }
    // Round half up: (2w + t) / 2t == round(w / t) for non-negative w and positive t.
    const std::int64_t score =
        total_weight == 0 ? 0 : (2 * weighted + total_weight) / (2 * total_weight);
    verdict.score = std::clamp(score, kMinExtenderPriority, kMaxExtenderPriority);
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

}  // namespace modelplane::extender
