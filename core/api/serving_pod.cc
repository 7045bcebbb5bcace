#include "core/api/serving_pod.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace modelplane::core::api {

bool IsObjectName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  const auto alphanumeric = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alphanumeric(name.front()) || !alphanumeric(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alphanumeric(c) || c == '-' || c == '.'; });
}

namespace {

// One reference of `annotation`'s value: "<name>" or "<pod_namespace>/<name>".
Result<RevisionReference> ParseReference(std::string_view value, std::string_view pod_namespace,
                                         std::string_view annotation) {
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
                                 annotation, value.substr(0, 300)));
  }
  if (reference.namespace_name != pod_namespace) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        fmt::format("{} names {}/{}: a pod may use only a ModelRevision in its own "
                    "namespace ({})",
                    annotation, reference.namespace_name, reference.name, pod_namespace));
  }
  return reference;
}

}  // namespace

Result<RevisionReference> ParseRevisionAnnotation(std::string_view value,
                                                  std::string_view pod_namespace) {
  return ParseReference(value, pod_namespace, kRevisionAnnotation);
}

std::string DefaultMountPath(std::string_view revision_name) {
  return fmt::format("{}/{}", kDefaultMountRoot, revision_name);
}

std::string MountPathOf(const nlohmann::json& annotations, std::string_view revision_name) {
  if (annotations.is_object()) {
    const auto value = annotations.find(kMountPathAnnotation);
    if (value != annotations.end() && value->is_string()) return value->get<std::string>();
  }
  return DefaultMountPath(revision_name);
}

std::vector<std::string> SplitAnnotationList(std::string_view value) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t end = std::min(value.find(',', start), value.size());
    std::string_view item = value.substr(start, end - start);
    const std::size_t first = item.find_first_not_of(" \t");
    if (first != std::string_view::npos) {
      item = item.substr(first, item.find_last_not_of(" \t") - first + 1);
      items.emplace_back(item);
    }
    start = end + 1;
  }
  return items;
}

Result<std::vector<RevisionReference>> ParseAdaptersAnnotation(std::string_view value,
                                                               std::string_view pod_namespace,
                                                               std::string_view revision_name) {
  const std::vector<std::string> items = SplitAnnotationList(value);
  if (items.size() > kMaxAdapters) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("annotation {} names {} adapters; a pod may name at most {}",
                                 kAdaptersAnnotation, items.size(), kMaxAdapters));
  }
  std::vector<RevisionReference> adapters;
  std::set<std::string> seen;
  for (const std::string& item : items) {
    auto reference = ParseReference(item, pod_namespace, kAdaptersAnnotation);
    if (!reference) return std::unexpected(reference.error());
    if (reference->name == revision_name) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("annotation {} names {}, the pod's own revision ({}); an "
                                   "adapter is a ModelRevision of its own, with spec.base",
                                   kAdaptersAnnotation, reference->name, kRevisionAnnotation));
    }
    if (!seen.insert(reference->name).second) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("annotation {} names {} twice", kAdaptersAnnotation, reference->name));
    }
    adapters.push_back(std::move(*reference));
  }
  return adapters;
}

std::string AdapterVolumeName(std::size_t index) {
  return fmt::format("{}{}", kAdapterVolumePrefix, index);
}

std::string AdapterMountPath(std::string_view base_mount_path, std::string_view adapter_name) {
  const std::size_t slash = base_mount_path.rfind('/');
  const std::string_view folder =
      slash == std::string_view::npos ? std::string_view() : base_mount_path.substr(0, slash);
  return fmt::format("{}/adapters/{}", folder, adapter_name);
}

std::string AdapterEngineName(std::string_view adapter_name, std::string_view digest) {
  const std::size_t colon = digest.find(':');
  const std::string_view hex = colon == std::string_view::npos ? digest : digest.substr(colon + 1);
  return fmt::format("{}-{}", adapter_name, hex.substr(0, kAdapterDigestHexInName));
}

std::string LoraModulesValue(const std::vector<LoraModule>& modules) {
  std::string value;
  for (const LoraModule& module : modules) {
    if (!value.empty()) value += ' ';
    value += fmt::format("{}={}", module.name, module.path);
  }
  return value;
}

}  // namespace modelplane::core::api
