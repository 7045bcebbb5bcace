#include "operator/quotas/quota_ledger.h"

#include <algorithm>

namespace modelplane::controller {

api::QuotaBytes QuotaLedger::Sum(const std::vector<std::string>& keys, const std::string& except,
                                 const WrittenCharge& written) const {
  api::QuotaBytes total;
  for (const std::string& key : keys) {
    if (key == except) continue;
    const auto share = shares_.find(key);
    const api::QuotaBytes charge = share != shares_.end() ? share->second.charge : written(key);
    total = api::SaturatingSum(total, charge);
  }
  return total;
}

QuotaGrant QuotaLedger::Decide(const std::string& namespace_name, const std::string& key,
                               const std::vector<std::string>& namespace_keys, const QuotaAsk& ask,
                               const api::NamespaceQuota& quota, const WrittenCharge& written) {
  std::unique_lock lock(mutex_);
  // Without a byte limit what the others hold changes nothing: skip reading it.
  const bool limited = quota.prestaged_bytes || quota.pinned_bytes;
  QuotaGrant grant = GrantWithinQuota(
      ask, quota, limited ? Sum(namespace_keys, key, written) : api::QuotaBytes{}, namespace_name);
  const bool changed = Put(key, Share{.charge = grant.charge, .limited = grant.Limited()});
  lock.unlock();
  if (changed && changed_) changed_(namespace_name);
  return grant;
}

void QuotaLedger::Release(const std::string& key) {
  Record(key, Share{});
}

void QuotaLedger::Forget(const std::string& key) {
  Record(key, std::nullopt);
}

void QuotaLedger::Record(const std::string& key, const std::optional<Share>& share) {
  std::unique_lock lock(mutex_);
  const bool changed = Put(key, share);
  lock.unlock();
  if (changed && changed_) changed_(key.substr(0, key.find('/')));
}

bool QuotaLedger::Put(const std::string& key, const std::optional<Share>& share) {
  const auto previous = shares_.find(key);
  if (!share) {
    if (previous == shares_.end()) return false;
    shares_.erase(previous);
    return true;
  }
  if (previous != shares_.end() && previous->second == *share) return false;
  shares_[key] = *share;
  return true;
}

QuotaLedger::Usage QuotaLedger::UsageOf(const std::vector<std::string>& namespace_keys,
                                        const WrittenCharge& written) const {
  const std::lock_guard lock(mutex_);
  Usage usage{.used = Sum(namespace_keys, "", written)};
  for (const std::string& key : namespace_keys) {
    const auto share = shares_.find(key);
    if (share != shares_.end() && share->second.limited) usage.limited.push_back(key);
  }
  std::sort(usage.limited.begin(), usage.limited.end());
  return usage;
}

}  // namespace modelplane::controller
