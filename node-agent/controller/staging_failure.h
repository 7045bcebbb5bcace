// What ModelCache status says of a staging that failed: a fixed reason code and a message made
// only of what the revision's spec names (file paths, source names). The error itself can carry
// a remote response body, a local path or the digest of bytes that did not match (an oracle for
// any file's sha256 if it reached tenant-visible status); it stays in the agent's log.
// Thread safety: a pure function.
#pragma once

#include <string>

#include "core/error/error.h"
#include "node-agent/fetch/fetch_report.h"

namespace modelplane::agent {

struct StagingFailure {
  std::string reason;  // core::api::kCacheReason*
  std::string message;
};

[[nodiscard]] StagingFailure DescribeStagingFailure(const core::Error& error,
                                                    const FetchReport& report);

}  // namespace modelplane::agent
