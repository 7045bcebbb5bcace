// The revisions whose own sources proved they serve the bytes the node holds (possession_proof.h),
// by revision digest and "namespace/name": the node serves held bytes to a revision only while
// the ledger names it. Kept on disk (one small JSON file, written durably) so a restart does not
// prove every revision again.
//
// Failing closed: a file that cannot be read, is malformed or too big is logged and discarded,
// and the revisions are proven again; an entry is in memory only once it is on disk. Bounded:
// at most kMaxPossessionRecords (digest, key) records, and never a file over
// kMaxPossessionLedgerBytes (what is written must be readable on the next start).
//
// Thread safety: every method may be called from any thread (the CSI plugin's threads ask
// Contains while the control loop records). Writes are serialised among themselves and never
// hold up readers while the file is synced.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "core/digest/sha256.h"
#include "core/error/error.h"
#include "core/log/logger.h"

namespace modelplane::agent {

inline constexpr std::size_t kMaxPossessionRecords = 65536;
inline constexpr std::size_t kMaxPossessionLedgerBytes = 1 << 20;

class PossessionLedger {
 public:
  // Creates the file's folder. A missing file is an empty ledger; an unreadable, malformed or
  // oversized one is logged (event possession_ledger_discarded) and treated as empty. Fails
  // only when the folder cannot be made. `logger` may be null.
  [[nodiscard]] static core::Result<std::unique_ptr<PossessionLedger>> Open(
      std::filesystem::path file, const core::Logger* logger);

  PossessionLedger(const PossessionLedger&) = delete;
  PossessionLedger& operator=(const PossessionLedger&) = delete;

  [[nodiscard]] bool Contains(const core::Sha256Bytes& revision_digest,
                              std::string_view revision_key) const;
  // Adds the record and writes the file; nothing to do when it is there already.
  // kResourceExhausted past kMaxPossessionRecords or kMaxPossessionLedgerBytes; a failed write
  // leaves the ledger as it was.
  [[nodiscard]] core::Status Record(const core::Sha256Bytes& revision_digest,
                                    std::string_view revision_key);
  // Drops the records of revision digests not in `kept` (the control loop passes those the node
  // holds or wants: a copy that comes back after it was gone is proven again), and writes the
  // file when something was dropped. Dropped records are gone from memory even if the write
  // fails.
  [[nodiscard]] core::Status Retain(const std::set<core::Sha256Bytes>& kept);
  // The "namespace/name" keys proven for the digest.
  [[nodiscard]] std::set<std::string> KeysFor(const core::Sha256Bytes& revision_digest) const;

 private:
  using Records = std::map<core::Sha256Bytes, std::set<std::string>, std::less<>>;

  PossessionLedger(std::filesystem::path file, Records records);

  const std::filesystem::path file_;
  std::mutex write_mutex_;  // held across a whole Record or Retain, write included
  mutable std::mutex mutex_;
  Records records_;        // guarded by mutex_
  std::size_t count_ = 0;  // (digest, key) records in records_; guarded by mutex_
};

}  // namespace modelplane::agent
