#include "node-agent/store/space_ledger.h"

#include <utility>

#include <fmt/format.h>

namespace modelplane::agent {

Reservation::Reservation(Reservation&& other) noexcept
    : ledger_(std::exchange(other.ledger_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      on_disk_(std::exchange(other.on_disk_, false)) {}

Reservation& Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Release();
    ledger_ = std::exchange(other.ledger_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    on_disk_ = std::exchange(other.on_disk_, false);
  }
  return *this;
}

Reservation::~Reservation() {
  Release();
}

void Reservation::Commit() {
  if (ledger_ != nullptr) ledger_->Settle(bytes_, true, on_disk_);
  ledger_ = nullptr;
  bytes_ = 0;
  on_disk_ = false;
}

void Reservation::Release() {
  if (ledger_ != nullptr) ledger_->Settle(bytes_, false, on_disk_);
  ledger_ = nullptr;
  bytes_ = 0;
  on_disk_ = false;
}

void Reservation::MarkOnDisk() {
  if (ledger_ == nullptr || on_disk_) return;
  ledger_->MarkOnDisk(bytes_);
  on_disk_ = true;
}

SpaceLedger::SpaceLedger(std::uint64_t capacity_bytes, std::uint64_t headroom_bytes,
                         std::function<std::uint64_t()> filesystem_available)
    : capacity_bytes_(capacity_bytes),
      headroom_bytes_(headroom_bytes),
      filesystem_available_(std::move(filesystem_available)) {}

core::Result<Reservation> SpaceLedger::Reserve(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  const std::uint64_t committed = used_bytes_ + reserved_bytes_;
  const std::uint64_t ledger_free = committed >= capacity_bytes_ ? 0 : capacity_bytes_ - committed;
  // Reservations already preallocated are inside the filesystem's own free figure; the others
  // are not yet, so they come off it here.
  const std::uint64_t available = filesystem_available_();
  const std::uint64_t set_aside = headroom_bytes_ + reserved_not_on_disk_bytes_;
  const std::uint64_t filesystem_free = available > set_aside ? available - set_aside : 0;
  if (bytes > ledger_free || bytes > filesystem_free) {
    return std::unexpected(core::Error(
        core::ErrorCode::kResourceExhausted,
        fmt::format("the cache cannot hold {} more bytes: capacity {}, used {}, reserved {}, "
                    "filesystem free {} (headroom {})",
                    bytes, capacity_bytes_, used_bytes_, reserved_bytes_, available,
                    headroom_bytes_),
        false));
  }
  reserved_bytes_ += bytes;
  reserved_not_on_disk_bytes_ += bytes;
  return Reservation(this, bytes);
}

void SpaceLedger::AddUsed(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  used_bytes_ += bytes;
}

void SpaceLedger::RemoveUsed(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  used_bytes_ = bytes > used_bytes_ ? 0 : used_bytes_ - bytes;
}

void SpaceLedger::Settle(std::uint64_t bytes, bool commit, bool on_disk) {
  std::lock_guard lock(mutex_);
  reserved_bytes_ -= bytes;
  if (!on_disk) reserved_not_on_disk_bytes_ -= bytes;
  if (commit) used_bytes_ += bytes;
}

void SpaceLedger::MarkOnDisk(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  reserved_not_on_disk_bytes_ -= bytes;
}

SpaceUsage SpaceLedger::Usage() const {
  std::lock_guard lock(mutex_);
  return {.capacity_bytes = capacity_bytes_,
          .used_bytes = used_bytes_,
          .reserved_bytes = reserved_bytes_,
          .filesystem_available_bytes = filesystem_available_()};
}

}  // namespace modelplane::agent
