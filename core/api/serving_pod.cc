#include "core/api/serving_pod.h"

#include <algorithm>

#include <fmt/format.h>

namespace modelplane::core::api {

bool IsObjectName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  const auto alphanumeric = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alphanumeric(name.front()) || !alphanumeric(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alphanumeric(c) || c == '-' || c == '.'; });
}

Result<RevisionReference> ParseRevisionAnnotation(std::string_view value,
                                                  std::string_view pod_namespace) {
  RevisionReference reference{.namespace_name = std::string(pod_namespace),
                              .name = std::string(value)};
  if (const auto slash = value.find('/'); slash != std::string_view::npos) {
    reference.namespace_name = std::string(value.substr(0, slash));
    reference.name = std::string(value.substr(slash + 1));
  }
  if (!IsObjectName(reference.namespace_name) || !IsObjectName(reference.name)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("annotation {} must be <name> or <namespace>/<name> of a "
                                 "ModelRevision, not \"{}\"",
                                 kRevisionAnnotation, value.substr(0, 300)));
  }
  if (reference.namespace_name != pod_namespace) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        fmt::format("{} names {}/{}: a pod may use only a ModelRevision in its own "
                    "namespace ({})",
                    kRevisionAnnotation, reference.namespace_name, reference.name, pod_namespace));
  }
  return reference;
}

std::string DefaultMountPath(std::string_view revision_name) {
  return fmt::format("{}/{}", kDefaultMountRoot, revision_name);
}

}  // namespace modelplane::core::api
