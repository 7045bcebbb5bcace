// `kubectl modelplane why POD`: one paragraph on what a serving pod waits for. In order:
// deleted or finished; gated (the modelplane.io/weights scheduling gate: is its revision Ready
// anywhere, staging where, refused where and why, what the operator last told the pod);
// gated by someone else; pending (the scheduler's Unschedulable message); bound but not ready
// (the modelplane.io/weights-ready readiness gate, else the Ready condition); running and ready.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/model_cache.h"
#include "core/api/timestamp.h"
#include "core/error/error.h"
#include "kubectl-plugin/revision_copies.h"

namespace modelplane::cli {

struct PodFacts {
  nlohmann::json pod;
  // The pod's ModelRevision as read; nullopt when it does not exist or the pod names none.
  std::optional<nlohmann::json> revision;
  // Set when reading the revision failed for another reason than "not found".
  std::optional<std::string> revision_unavailable;
  CacheListing caches;
  std::vector<nlohmann::json> events;  // events.k8s.io/v1 Events regarding the pod, any order
};

// The revision the pod's modelplane.io/revision annotation names; nullopt without one, an error
// when it is malformed.
[[nodiscard]] core::Result<std::optional<core::api::RevisionReference>> PodRevision(
    const nlohmann::json& pod);

// The paragraph, word-wrapped to the terminal, ending in a line break. Fails only when `pod` is
// not a Pod the types can read.
[[nodiscard]] core::Result<std::string> ExplainPod(const PodFacts& facts, core::api::Timestamp now);

}  // namespace modelplane::cli
