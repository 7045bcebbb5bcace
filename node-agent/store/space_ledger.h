// Disk space accounting for one cache root: capacity, bytes used by published blobs, and bytes
// reserved by stagings still in progress. A staging reserves its whole size before it writes a
// byte, so two concurrent stagings can never together overcommit the disk; a Reservation that
// is dropped (failure, cancel) gives its bytes back, one that is committed (publish) turns them
// into used bytes.
//
// A staging preallocates its file when it starts writing, not when it reserves (on tmpfs,
// preallocating is real work, and a revision's files are reserved all at once). Until then the
// filesystem's free figure does not include the reservation, so the ledger subtracts the bytes
// reserved but not yet on disk from it.
//
// Thread safety: every method may be called from any thread. A Reservation must not outlive its
// ledger.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>

#include "core/error/error.h"

namespace modelplane::agent {

struct SpaceUsage {
  std::uint64_t capacity_bytes = 0;
  std::uint64_t used_bytes = 0;
  std::uint64_t reserved_bytes = 0;
  // What the filesystem itself still has free, for the cases the ledger cannot see (other
  // programs writing to the same disk).
  std::uint64_t filesystem_available_bytes = 0;
};

class SpaceLedger;

class Reservation {
 public:
  Reservation() = default;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  Reservation(Reservation&& other) noexcept;
  Reservation& operator=(Reservation&& other) noexcept;
  ~Reservation();

  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }
  // The bytes become used (a blob of this size was published).
  void Commit();
  // The bytes return to the free pool.
  void Release();
  // The bytes are allocated on the filesystem now (preallocated or already written), so the
  // filesystem's free figure accounts for them.
  void MarkOnDisk();
  [[nodiscard]] bool on_disk() const { return on_disk_; }

 private:
  friend class SpaceLedger;
  Reservation(SpaceLedger* ledger, std::uint64_t bytes) : ledger_(ledger), bytes_(bytes) {}
  SpaceLedger* ledger_ = nullptr;
  std::uint64_t bytes_ = 0;
  bool on_disk_ = false;
};

class SpaceLedger {
 public:
  // `filesystem_available` reports what the filesystem has free now (statvfs in production);
  // `headroom_bytes` stay free on the filesystem whatever the ledger says.
  SpaceLedger(std::uint64_t capacity_bytes, std::uint64_t headroom_bytes,
              std::function<std::uint64_t()> filesystem_available);
  SpaceLedger(const SpaceLedger&) = delete;
  SpaceLedger& operator=(const SpaceLedger&) = delete;

  // kResourceExhausted (not retryable) when the bytes do not fit, saying how much is free.
  [[nodiscard]] core::Result<Reservation> Reserve(std::uint64_t bytes);

  void AddUsed(std::uint64_t bytes);
  void RemoveUsed(std::uint64_t bytes);

  [[nodiscard]] SpaceUsage Usage() const;

 private:
  friend class Reservation;
  void Settle(std::uint64_t bytes, bool commit, bool on_disk);
  void MarkOnDisk(std::uint64_t bytes);

  const std::uint64_t capacity_bytes_;
  const std::uint64_t headroom_bytes_;
  const std::function<std::uint64_t()> filesystem_available_;
  mutable std::mutex mutex_;
  std::uint64_t used_bytes_ = 0;
  std::uint64_t reserved_bytes_ = 0;
  std::uint64_t reserved_not_on_disk_bytes_ = 0;
};

}  // namespace modelplane::agent
