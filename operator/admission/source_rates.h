// The byte rate each source's admission budget allows the fleet (BudgetBytesPerSecond), as the
// admission controller last stepped it, for the ModelRevision controller to predict how long a
// rollout's staging takes (rollout_readiness.h). The one thing the two controllers share.
// Thread safety: every member may be called from any thread; they serialise on a mutex.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace modelplane::controller {

class SourceRates {
 public:
  // An empty rate forgets the source (nothing measured yet, no ceiling).
  void Set(const std::string& identity, std::optional<double> bytes_per_second);
  [[nodiscard]] std::optional<double> BytesPerSecond(const std::string& identity) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, double, std::less<>> rates_;  // by source identity
};

}  // namespace modelplane::controller
