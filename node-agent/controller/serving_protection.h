// Keeps live inference first on a node that serves it: while pods that use a revision run here,
// the node's stagings write at most `share` of the cache disk's measured bandwidth, and peer
// uploads send at most `share` of the node's network bandwidth (when one is configured; it is
// not measured). Otherwise stagings write freely and uploads keep their configured cap.
// Thread safety: a pure function.
#pragma once

#include <cstdint>

namespace modelplane::agent {

struct ServingProtection {
  double share = 0.5;                          // of each bandwidth, in (0, 1]; 1: no limit
  std::uint64_t media_bytes_per_second = 0;    // measured at start; 0: unknown, no write cap
  std::uint64_t network_bytes_per_second = 0;  // configured; 0: unknown, the upload cap stays
  std::uint64_t upload_cap = 0;                // peers.maxUploadRate; 0: none
};

struct TransferLimits {
  std::uint64_t write_bytes_per_second = 0;   // 0: unlimited
  std::uint64_t upload_bytes_per_second = 0;  // 0: unlimited
  friend bool operator==(const TransferLimits&, const TransferLimits&) = default;
};

[[nodiscard]] TransferLimits LimitsWhile(bool serving, const ServingProtection& protection);

}  // namespace modelplane::agent
