#include "node-agent/fetch/source_order.h"

#include <algorithm>
#include <string_view>

#include "core/api/model_revision.h"

namespace modelplane::agent {
namespace {

int TierRank(std::string_view tier) {
  if (tier == core::api::kTierPeer) return 0;
  if (tier == core::api::kTierSharedFilesystem) return 1;
  return 2;
}

}  // namespace

int SourceRank(const RangeSource& source, const core::Sha256Bytes& blob) {
  if (source.MayHoldLater(blob)) return 4;
  if (source.tier() == core::api::kTierPeer) return source.nearby() ? 0 : 1;
  return TierRank(source.tier()) + 1;
}

void SortByTierPreference(std::vector<std::unique_ptr<RangeSource>>& sources) {
  std::stable_sort(sources.begin(), sources.end(), [](const auto& left, const auto& right) {
    return TierRank(left->tier()) < TierRank(right->tier());
  });
}

}  // namespace modelplane::agent
