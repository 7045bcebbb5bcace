#include "scheduler-extender/pod_revision.h"

#include <algorithm>

namespace modelplane::extender {
namespace {

// A DNS-1123 subdomain (what namespaces and ModelRevision names must be), loosely: the API
// server has already enforced the exact rule for objects that exist, so this only has to keep
// garbage out of lookups and logs.
bool IsObjectName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

}  // namespace

PodRevision RevisionOfPod(const PodSummary& pod) {
  const auto found = pod.annotations.find(std::string(kRevisionAnnotation));
  if (found == pod.annotations.end()) return {};
  const std::string& value = found->second;
  PodRevision result{.kind = PodRevision::Kind::kMalformed};
  std::string namespace_name = pod.namespace_name;
  std::string name = value;
  if (const auto slash = value.find('/'); slash != std::string::npos) {
    namespace_name = value.substr(0, slash);
    name = value.substr(slash + 1);
  }
  if (!IsObjectName(namespace_name) || !IsObjectName(name)) {
    result.problem = "annotation " + std::string(kRevisionAnnotation) +
                     " must be <name> or <namespace>/<name> of a ModelRevision";
    return result;
  }
  result.kind = PodRevision::Kind::kNamed;
  result.key = namespace_name + "/" + name;
  return result;
}

}  // namespace modelplane::extender
