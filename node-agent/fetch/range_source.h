// The seam between the fetch engine and the places a file's bytes can come from: a peer agent,
// a shared filesystem, an HTTP origin or an object store. The engine plans ranges, owns the
// buffers and checks every byte against the file's sha256; a source only moves bytes.
//
// Thread safety: ReadRange is called from many fetch workers at once, for different files and
// ranges; implementations must be safe for that. tier(), name() and max_concurrency() are
// constant for the object's life.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/digest/sha256.h"
#include "core/error/error.h"

namespace modelplane::agent {

// What a source needs to find one file of a revision.
struct SourceFile {
  // Relative, '/'-separated path from the revision's file set, already validated by the caller
  // (no "..", not absolute, no empty segments). Object stores and origins append it to their
  // prefix or base URL; shared filesystems join it to their root and must still refuse to leave
  // that root through symlinks.
  std::string path;
  // The digest the bytes must match; peers look blobs up by it.
  core::Sha256Bytes sha256{};
  std::uint64_t size = 0;
};

// Bounds on one ReadRange call.
struct ReadContext {
  // The whole range must have arrived by then, on `clock`; a stalled source ends with
  // kDeadlineExceeded.
  core::Clock::SteadyTime deadline = core::Clock::SteadyTime::max();
  // The fetch's clock, which `deadline` is on; null: the system's steady clock.
  const core::Clock* clock = nullptr;
  // Stops the read early with kCancelled; may be null. Not const: a source registers callbacks
  // on it (closing its socket) to end a blocked read.
  core::CancellationToken* cancel = nullptr;
  // Where a source that can tell writes when its answer began to arrive (time to first byte);
  // may be null. Written on the calling thread.
  std::chrono::steady_clock::time_point* first_byte = nullptr;

  [[nodiscard]] core::Clock::SteadyTime Now() const {
    return clock != nullptr ? clock->Now() : std::chrono::steady_clock::now();
  }
  // What is left until the deadline, at least 1 ms (a zero timeout would mean "no wait" to some
  // asio paths); nullopt without a deadline.
  [[nodiscard]] std::optional<std::chrono::milliseconds> TimeLeft() const {
    if (deadline == core::Clock::SteadyTime::max()) return std::nullopt;
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Now()));
  }

  // Why a read must stop now (kCancelled, kDeadlineExceeded), or nothing while it may go on.
  [[nodiscard]] std::optional<core::Error> StopReason() const {
    if (cancel != nullptr && cancel->cancelled()) {
      return core::Error(core::ErrorCode::kCancelled, "read cancelled");
    }
    if (Now() >= deadline) {
      return core::Error(core::ErrorCode::kDeadlineExceeded, "read deadline passed");
    }
    return std::nullopt;
  }
};

class RangeSource {
 public:
  virtual ~RangeSource() = default;

  // The tier this source belongs to: one of core::api::kTier* ("peer", "sharedFilesystem",
  // "http", "objectStore"). Used for fallback order, metrics and status.
  [[nodiscard]] virtual std::string_view tier() const = 0;
  // Unique among the sources of one fetch, stable, fit for logs and metric labels:
  // "objectStore/minio", "peer/10.0.0.7:7443".
  [[nodiscard]] virtual std::string_view name() const = 0;
  // How many ReadRange calls this source wants in flight at once, across all files.
  [[nodiscard]] virtual std::size_t max_concurrency() const = 0;
  // The budget this source's requests count against: a remote source's identity
  // (core/api/source_identity.h), admitted by the node's SourceAdmission; empty for sources the
  // node reads without a grant (peers).
  [[nodiscard]] virtual std::string_view admission_key() const { return {}; }
  // Whether the source can have this blob at all: a peer that holds or stages only some of a
  // fetch's files is asked only for those.
  [[nodiscard]] virtual bool MayHold(const core::Sha256Bytes& /*blob*/) const { return true; }
  // Whether a kNotFound for this blob means "not yet": a peer still staging it. The engine asks
  // again later instead of giving the source up for the file.
  [[nodiscard]] virtual bool MayHoldLater(const core::Sha256Bytes& /*blob*/) const { return false; }
  // Peers: whether the peer is in this node's zone (read before peers elsewhere).
  [[nodiscard]] virtual bool nearby() const { return true; }

  // Fills `destination` with bytes [offset, offset + destination.size()) of `file`, entirely or
  // not at all. Errors: kNotFound (the source has no such file or blob), kUnauthenticated /
  // kPermissionDenied, kDataLoss (the source holds fewer bytes than asked: truncated),
  // kDeadlineExceeded, kCancelled, kUnavailable / kThrottled (retryable), kIo.
  [[nodiscard]] virtual core::Status ReadRange(const SourceFile& file, std::uint64_t offset,
                                               std::span<std::byte> destination,
                                               const ReadContext& context) = 0;
};

}  // namespace modelplane::agent
