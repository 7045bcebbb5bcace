// What each revision of a namespace holds against its ModelQuotas, and the one place where a
// revision's share is decided. Revisions reconcile concurrently, so two of one namespace could
// each see the other's old share and together pass a limit; Decide takes the namespace's turn,
// sums what the others hold, grants this one what fits (quota_grant.h) and records it before
// the caller writes a single cache entry, so the next decision already counts it. First come,
// first served, as ResourceQuota admits pods: a revision keeps what it was granted while the
// limit allows, and one that was cut gets more once others shrink (the controller retries cut
// revisions).
//
// A revision this process has not decided since it started (a restart, a new leader) counts
// with what its entries in the ModelCache specs say (`written`), so a new leader grants nothing
// twice.
// Thread safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/api/model_quota.h"
#include "operator/quotas/quota_grant.h"

namespace modelplane::controller {

class QuotaLedger {
 public:
  // What a revision ("namespace/name") holds according to the ModelCache specs.
  using WrittenCharge = std::function<api::QuotaBytes(const std::string& key)>;
  // Called, outside the ledger's lock, with a namespace whose usage or cut revisions changed
  // (its ModelQuotas' status is due).
  using Changed = std::function<void(const std::string& namespace_name)>;

  explicit QuotaLedger(Changed changed = {}) : changed_(std::move(changed)) {}

  // `namespace_keys`: every revision of the namespace ("namespace/name"), `key` among them or
  // not.
  [[nodiscard]] QuotaGrant Decide(const std::string& namespace_name, const std::string& key,
                                  const std::vector<std::string>& namespace_keys,
                                  const QuotaAsk& ask, const api::NamespaceQuota& quota,
                                  const WrittenCharge& written);
  // A revision that holds nothing it is charged for (invalid, revoked, deleting).
  void Release(const std::string& key);
  // A revision that is gone: what its entries still say counts until they are removed.
  void Forget(const std::string& key);

  struct Usage {
    api::QuotaBytes used;
    std::vector<std::string> limited;  // keys of revisions the quota cuts, sorted
  };
  [[nodiscard]] Usage UsageOf(const std::vector<std::string>& namespace_keys,
                              const WrittenCharge& written) const;

 private:
  struct Share {
    api::QuotaBytes charge;
    bool limited = false;

    friend bool operator==(const Share&, const Share&) = default;
  };
  // Records `share` for `key` (none: forgets it) and calls changed_ when that changed anything.
  void Record(const std::string& key, const std::optional<Share>& share);
  // Under mutex_: the same, returning whether it changed anything.
  bool Put(const std::string& key, const std::optional<Share>& share);
  api::QuotaBytes Sum(const std::vector<std::string>& keys, const std::string& except,
                      const WrittenCharge& written) const;  // under mutex_

  const Changed changed_;
  mutable std::mutex mutex_;
  std::map<std::string, Share> shares_;  // by revision key
};

}  // namespace modelplane::controller
