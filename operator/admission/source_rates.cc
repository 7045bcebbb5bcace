#include "operator/admission/source_rates.h"

namespace modelplane::controller {

void SourceRates::Set(const std::string& identity, std::optional<double> bytes_per_second) {
  const std::lock_guard lock(mutex_);
  if (bytes_per_second && *bytes_per_second > 0) {
    rates_[identity] = *bytes_per_second;
  } else {
    rates_.erase(identity);
  }
}

std::optional<double> SourceRates::BytesPerSecond(const std::string& identity) const {
  const std::lock_guard lock(mutex_);
  const auto found = rates_.find(identity);
  if (found == rates_.end()) return std::nullopt;
  return found->second;
}

}  // namespace modelplane::controller
