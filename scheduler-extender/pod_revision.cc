#include "scheduler-extender/pod_revision.h"

#include "core/api/object_key.h"
#include "core/api/serving_pod.h"

namespace modelplane::extender {

PodRevision RevisionOfPod(const PodSummary& pod) {
  const auto found = pod.annotations.find(std::string(kRevisionAnnotation));
  if (found == pod.annotations.end()) return {};
  auto reference = core::api::ParseRevisionAnnotation(found->second, pod.namespace_name);
  if (!reference) {
    return {.kind = PodRevision::Kind::kMalformed, .problem = reference.error().message()};
  }
  return {.kind = PodRevision::Kind::kNamed,
          .key = core::api::ObjectKey(reference->namespace_name, reference->name)};
}

}  // namespace modelplane::extender
