#include "node-agent/controller/serving_protection.h"

#include <algorithm>
#include <cmath>

namespace modelplane::agent {
namespace {

std::uint64_t ShareOf(std::uint64_t bandwidth, double share) {
  return std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::floor(static_cast<double>(bandwidth) * share)));
}

}  // namespace

TransferLimits LimitsWhile(bool serving, const ServingProtection& protection) {
  TransferLimits limits{.upload_bytes_per_second = protection.upload_cap};
  if (!serving || protection.share >= 1.0 || protection.share <= 0.0) return limits;
  if (protection.media_bytes_per_second > 0) {
    limits.write_bytes_per_second = ShareOf(protection.media_bytes_per_second, protection.share);
  }
  if (protection.network_bytes_per_second > 0) {
    const std::uint64_t share = ShareOf(protection.network_bytes_per_second, protection.share);
    limits.upload_bytes_per_second =
        protection.upload_cap == 0 ? share : std::min(protection.upload_cap, share);
  }
  return limits;
}

}  // namespace modelplane::agent
