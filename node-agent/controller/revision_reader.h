// The ModelRevisions this node needs (the ModelCache wants them, a pod here names them, or the
// store holds them), each read by name instead of watching every revision in the cluster: a
// revision's status grows with the fleet and changes as every node stages it, so a
// cluster-wide watch on each agent would cost the API server O(N²) (docs/architecture.md,
// "Fleet scale"). What changes after a read reaches the agent through its own ModelCache:
// revocation of what it holds (spec.holdings), a new digest for what it stages (the entry's
// digest, which makes the reader read again). Otherwise each revision is read again after the
// refresh period, and one that was not found after the retry period.
// Thread safety: not thread-safe; the control loop's worker owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock/clock.h"
#include "core/digest/sha256.h"
#include "core/kube/kube_client.h"
#include "core/kube/object_store.h"

namespace modelplane::agent {

struct RevisionReaderOptions {
  std::chrono::seconds refresh_period{300};
  std::chrono::seconds retry_period{10};
};

class RevisionReader {
 public:
  RevisionReader(core::KubeClient& client, const core::Clock& clock, RevisionReaderOptions options)
      : client_(client), clock_(clock), options_(options) {}

  // The digest this node holds for a key, computed from the last read (null: none or invalid).
  using DigestOf = std::function<std::optional<core::Sha256Bytes>(const std::string& key)>;

  // Keeps exactly the keys of `wanted` ("ns/name" -> the digest the operator expects, or ""),
  // reading those never read, due for a refresh or retry, or whose digest differs from the
  // expected one (at most once a retry period). A failed read other than not-found keeps the
  // last copy. Returns the first error, after trying every key.
  [[nodiscard]] core::Status Sync(const std::map<std::string, std::string>& wanted,
                                  const DigestOf& digest_of);
  // Every revision read and found.
  [[nodiscard]] std::vector<core::ObjectPtr> Objects() const;
  // When the next read is due; nullopt with nothing to read again before the refresh period.
  [[nodiscard]] std::optional<core::Clock::SteadyTime> NextRetry() const;
  [[nodiscard]] std::uint64_t reads() const { return reads_; }

 private:
  struct Entry {
    core::ObjectPtr object;  // null: not found
    core::Clock::SteadyTime read_at{};
    bool retry_soon = false;  // not found, failed, or a digest other than the operator's
  };

  core::KubeClient& client_;
  const core::Clock& clock_;
  const RevisionReaderOptions options_;
  std::map<std::string, Entry> entries_;
  std::uint64_t reads_ = 0;
};

}  // namespace modelplane::agent
