// Computes a staging file's SHA-256 in file order while its ranges land in any order, so
// verification costs no second read.
//
// The thread that lands the range the hash is waiting for hashes it, then every later range
// already parked (kept with its buffer until the hash reaches it), then returns; a range that
// lands early is parked and its thread returns at once. Ranges that were complete on disk
// before this fetch (a resumed staging) have no buffer: they are read back from the file.
//
// A file that starts over (a refetch after a digest mismatch) gets a new generation; ranges of
// an earlier generation that land afterwards are dropped, since their bytes came from a source
// now barred.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include "core/digest/sha256.h"
#include "core/error/error.h"
#include "node-agent/fetch/buffer_pool.h"
#include "node-agent/store/partial_blob.h"

namespace modelplane::agent {

class OrderedHasher {
 public:
  // Called (without locks held) each time the hash moves past a range.
  using Progress = std::function<void(std::size_t next_unhashed)>;

  explicit OrderedHasher(Progress progress) : progress_(std::move(progress)) {}
  OrderedHasher(const OrderedHasher&) = delete;
  OrderedHasher& operator=(const OrderedHasher&) = delete;

  // Starts (again) from the first range of `partial`, dropping anything parked. Returns the new
  // generation. `partial` must stay alive until the generation completes or restarts.
  std::uint32_t Restart(PartialBlob& partial);

  struct Outcome {
    core::Status status = core::Ok();
    // True for exactly one call per generation: the one that hashed the last range. That caller
    // takes the digest with TakeDigest.
    bool complete = false;
  };
  // Range `index` of `generation` is written and marked done; `lease` holds its bytes (or is
  // empty: then they are read back from the file when the hash reaches them).
  [[nodiscard]] Outcome Land(std::uint32_t generation, std::size_t index, BufferLease lease);
  // Hashes the ranges already done on disk at the start of the file, as far as they reach.
  [[nodiscard]] Outcome CatchUp(std::uint32_t generation);
  [[nodiscard]] core::Sha256Bytes TakeDigest();

  [[nodiscard]] std::size_t parked() const;
  [[nodiscard]] std::uint32_t generation() const;

 private:
  [[nodiscard]] core::Status HashRange(std::size_t index, const BufferLease& buffer);

  const Progress progress_;
  mutable std::mutex mutex_;
  PartialBlob* partial_ = nullptr;
  std::optional<core::Sha256> sha256_;
  std::uint32_t generation_ = 0;
  std::size_t next_ = 0;
  std::map<std::size_t, BufferLease> parked_;
  bool hashing_ = false;
  bool complete_ = false;
};

}  // namespace modelplane::agent
