// How a pod names the ModelRevision it serves: the annotation modelplane.io/revision, either
// "<name>" (a revision in the pod's own namespace) or "<namespace>/<name>".
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/api/serving_pod.h"
#include "scheduler-extender/extender_protocol.h"

namespace modelplane::extender {

using core::api::kRevisionAnnotation;

struct PodRevision {
  enum class Kind {
    kNone,       // no annotation: not a modelplane pod
    kNamed,      // `key` is "namespace/name"
    kMalformed,  // an annotation that names nothing; `problem` says why
  };
  Kind kind = Kind::kNone;
  std::string key;
  std::string problem;
};

[[nodiscard]] PodRevision RevisionOfPod(const PodSummary& pod);

}  // namespace modelplane::extender
