// Who besides the store may be reading a revision's folder view: the CSI plugin's bind mounts
// into pods. Eviction claims a view before it removes the revision: the claim is granted only
// while no mount of it exists, and while the claim lives no new mount of it starts. So a pod
// never gets a view that is being taken apart, and no revision a pod has mounted is evicted.
// Thread safety: implementations are called from the evictor's thread while other threads
// publish volumes.
#pragma once

#include <functional>
#include <optional>
#include <utility>

#include "core/digest/sha256.h"

namespace modelplane::agent {

// Move-only; releases the claim when it goes.
class ViewClaim {
 public:
  ViewClaim() = default;
  explicit ViewClaim(std::function<void()> release) : release_(std::move(release)) {}
  ViewClaim(const ViewClaim&) = delete;
  ViewClaim& operator=(const ViewClaim&) = delete;
  ViewClaim(ViewClaim&& other) noexcept : release_(std::exchange(other.release_, nullptr)) {}
  ViewClaim& operator=(ViewClaim&& other) noexcept {
    if (this != &other) {
      Release();
      release_ = std::exchange(other.release_, nullptr);
    }
    return *this;
  }
  ~ViewClaim() { Release(); }
  void Release() {
    if (release_) std::exchange(release_, nullptr)();
  }

 private:
  std::function<void()> release_;
};

class ViewGuard {
 public:
  virtual ~ViewGuard() = default;
  // Nullopt while a mount of the revision's view exists.
  [[nodiscard]] virtual std::optional<ViewClaim> ClaimUnmounted(
      const core::Sha256Bytes& revision_digest) = 0;
};

}  // namespace modelplane::agent
