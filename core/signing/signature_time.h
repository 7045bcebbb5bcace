// The time a revision's signing certificates must be valid at: its creationTimestamp, which
// the API server sets and the author cannot, so the verdict on a revision does not change as
// time passes. "now" where the object has none yet (an AdmissionReview of a CREATE may carry
// the object before the API server stamped it).
// Thread safety: pure function.
#pragma once

#include <chrono>

#include "core/api/model_revision.h"

namespace modelplane::core {

[[nodiscard]] inline std::chrono::system_clock::time_point SignatureTime(
    const api::ModelRevision& revision, std::chrono::system_clock::time_point now) {
  if (!revision.metadata.creation_timestamp) return now;
  return std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      *revision.metadata.creation_timestamp);
}

}  // namespace modelplane::core
