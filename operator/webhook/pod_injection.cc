#include "operator/webhook/pod_injection.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/api/object_key.h"
#include "core/api/serving_pod.h"
#include "core/json/json_lookup.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;
namespace api = core::api;

constexpr std::size_t kMaxMountPath = 1024;

InjectionResult Refuse(std::string message, std::string revision = {}) {
  return {.allowed = false,
          .message = std::move(message),
          .revision = std::move(revision),
          .outcome = "refused"};
}

std::string Annotation(const json& pod, std::string_view key) {
  const auto metadata = pod.find("metadata");
  if (metadata == pod.end() || !metadata->is_object()) return {};
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return {};
  const auto value = annotations->find(key);
  return value != annotations->end() && value->is_string() ? value->get<std::string>()
                                                           : std::string();
}

bool HasAnnotation(const json& pod, std::string_view key) {
  const auto metadata = pod.find("metadata");
  if (metadata == pod.end() || !metadata->is_object()) return false;
  const auto annotations = metadata->find("annotations");
  return annotations != metadata->end() && annotations->is_object() && annotations->contains(key);
}

// An absolute, normalized path: what a container mount needs and what cannot climb out.
std::optional<std::string> MountPathProblem(const std::string& path) {
  if (path.empty() || path.front() != '/') return "must be an absolute path";
  if (path.size() > kMaxMountPath) return "is too long";
  if (path == "/") return "must not be the container's root";
  if (path.back() == '/') return "must not end with '/'";
  std::size_t start = 1;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view segment(path.data() + start, end - start);
    if (segment.empty() || segment == "." || segment == "..") {
      return "must not contain empty, '.' or '..' segments";
    }
    start = end + 1;
  }
  if (path.find_first_of(std::string_view("\0\n:", 3)) != std::string::npos) {
    return "must not contain NUL, newlines or ':'";
  }
  return std::nullopt;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) items.push_back(std::move(item));
    start = end + 1;
  }
  return items;
}

json& ArrayMember(json& object, const char* key) {
  if (!object.contains(key) || !object[key].is_array()) object[key] = json::array();
  return object[key];
}

bool ContainsNamed(const json& list, const char* field, std::string_view name) {
  return std::any_of(list.begin(), list.end(),
                     [&](const json& item) { return core::StringMember(item, {field}) == name; });
}

bool IsOurVolume(const json& volume) {
  if (volume.contains("csi") && volume["csi"].is_object()) {
    return core::StringMember(volume["csi"], {"driver"}) == api::kCsiDriverName;
  }
  return volume.contains("hostPath");
}

json WeightsVolume(const api::RevisionReference& revision, const RevisionLookup& found,
                   const InjectionOptions& options) {
  if (options.volume_mode == WeightsVolumeMode::kHostPath) {
    const std::string hex = found.digest.substr(found.digest.find(':') + 1);
    return {{"name", api::kWeightsVolumeName},
            {"hostPath",
             {{"path", fmt::format("{}/models/{}", options.host_cache_root, hex)},
              {"type", "Directory"}}}};
  }
  return {{"name", api::kWeightsVolumeName},
          {"csi",
           {{"driver", api::kCsiDriverName},
            {"readOnly", true},
            {"volumeAttributes", {{api::kRevisionVolumeAttribute, revision.name}}}}}};
}

}  // namespace

InjectionResult InjectServingPod(const json& pod, const std::string& pod_namespace,
                                 const RevisionLookupFunction& lookup,
                                 const InjectionOptions& options) {
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) {
    return Refuse("the request carries no pod spec");
  }
  if (!HasAnnotation(pod, api::kRevisionAnnotation)) return {.outcome = "unmanaged"};
  if (!options.namespace_scope.empty() && pod_namespace != options.namespace_scope) {
    return {
        .warnings = {fmt::format("modelplane serves namespace {} only; annotation {} is "
                                 "ignored in {}",
                                 options.namespace_scope, api::kRevisionAnnotation, pod_namespace)},
        .outcome = "unmanaged"};
  }
  auto reference =
      api::ParseRevisionAnnotation(Annotation(pod, api::kRevisionAnnotation), pod_namespace);
  if (!reference) return Refuse(reference.error().message());
  const std::string key = core::api::ObjectKey(reference->namespace_name, reference->name);

  const RevisionLookup found = lookup(reference->namespace_name, reference->name);
  InjectionResult result{.revision = key};
  switch (found.state) {
    case RevisionLookup::State::kInvalid:
      return Refuse(fmt::format("ModelRevision {} is invalid: {}", key, found.problem), key);
    case RevisionLookup::State::kRevoked:
      return Refuse(fmt::format("ModelRevision {} is revoked", key), key);
    case RevisionLookup::State::kMissing:
      if (options.volume_mode == WeightsVolumeMode::kHostPath) {
        return Refuse(fmt::format("ModelRevision {} does not exist; in hostPath mode the "
                                  "revision must exist before its pods (its digest names the "
                                  "folder to mount)",
                                  key),
                      key);
      }
      result.warnings.push_back(fmt::format(
          "ModelRevision {} does not exist yet: the pod waits, gated, until it is created and "
          "staged",
          key));
      break;
    case RevisionLookup::State::kValid: break;
  }

  const std::string mount_path = HasAnnotation(pod, api::kMountPathAnnotation)
                                     ? Annotation(pod, api::kMountPathAnnotation)
                                     : api::DefaultMountPath(reference->name);
  if (auto problem = MountPathProblem(mount_path)) {
    return Refuse(fmt::format("annotation {}: \"{}\" {}", api::kMountPathAnnotation,
                              mount_path.substr(0, 200), *problem),
                  key);
  }

  json mutated = pod;
  json& spec = mutated["spec"];
  json& containers = ArrayMember(spec, "containers");
  std::set<std::string> targets;
  if (HasAnnotation(pod, api::kContainersAnnotation)) {
    for (const std::string& name : SplitList(Annotation(pod, api::kContainersAnnotation))) {
      if (!ContainsNamed(containers, "name", name)) {
        return Refuse(fmt::format("annotation {} names container \"{}\", which the pod does not "
                                  "have",
                                  api::kContainersAnnotation, name.substr(0, 63)),
                      key);
      }
      targets.insert(name);
    }
    if (targets.empty()) {
      return Refuse(fmt::format("annotation {} names no container", api::kContainersAnnotation),
                    key);
    }
  }

  json& volumes = ArrayMember(spec, "volumes");
  const auto existing = std::find_if(volumes.begin(), volumes.end(), [](const json& volume) {
    return core::StringMember(volume, {"name"}) == api::kWeightsVolumeName;
  });
  if (existing == volumes.end()) {
    volumes.push_back(WeightsVolume(*reference, found, options));
  } else if (!IsOurVolume(*existing)) {
    return Refuse(fmt::format("the pod already has a volume named {} that is not modelplane's",
                              api::kWeightsVolumeName),
                  key);
  }

  for (json& container : containers) {
    if (!container.is_object()) continue;
    const std::string name = core::StringMember(container, {"name"});
    if (!targets.empty() && !targets.contains(name)) continue;
    json& mounts = ArrayMember(container, "volumeMounts");
    if (!ContainsNamed(mounts, "name", api::kWeightsVolumeName)) {
      if (ContainsNamed(mounts, "mountPath", mount_path)) {
        return Refuse(
            fmt::format("container \"{}\" already mounts something at {}", name, mount_path), key);
      }
      mounts.push_back(
          {{"name", api::kWeightsVolumeName}, {"mountPath", mount_path}, {"readOnly", true}});
    }
    // First in the list: Kubernetes expands $(VAR) in a variable's value only from those
    // defined before it, so the container's own variables can build on these.
    json& environment = ArrayMember(container, "env");
    std::size_t position = 0;
    const auto add_first = [&](json variable) {
      if (ContainsNamed(environment, "name", variable["name"].get<std::string>())) return;
      environment.insert(environment.begin() + static_cast<std::ptrdiff_t>(position++),
                         std::move(variable));
    };
    add_first({{"name", api::kModelPathEnvironment}, {"value", mount_path}});
    add_first({{"name", api::kRevisionDigestEnvironment},
               {"valueFrom",
                {{"fieldRef",
                  {{"fieldPath", fmt::format("metadata.annotations['{}']",
                                             api::kRevisionDigestAnnotation)}}}}}});
  }

  json& gates = ArrayMember(spec, "schedulingGates");
  if (!ContainsNamed(gates, "name", api::kWeightsSchedulingGate)) {
    gates.push_back({{"name", api::kWeightsSchedulingGate}});
  }
  json& readiness = ArrayMember(spec, "readinessGates");
  if (!ContainsNamed(readiness, "conditionType", api::kWeightsReadyCondition)) {
    readiness.push_back({{"conditionType", api::kWeightsReadyCondition}});
  }
  const std::string scheduler = core::StringMember(spec, {"schedulerName"});
  if (!options.scheduler_name.empty() && (scheduler.empty() || scheduler == "default-scheduler")) {
    spec["schedulerName"] = options.scheduler_name;
  }
  json& metadata = mutated["metadata"];
  if (!metadata.contains("annotations") || !metadata["annotations"].is_object()) {
    metadata["annotations"] = json::object();
  }
  json& annotations = metadata["annotations"];
  annotations[std::string(api::kInjectedAnnotation)] =
      found.state == RevisionLookup::State::kValid ? found.digest : std::string("pending");
  // Only modelplane says which bytes the pod runs: a value the author wrote is replaced, or
  // dropped until the operator writes it as it lets the pod go.
  if (found.state == RevisionLookup::State::kValid) {
    annotations[std::string(api::kRevisionDigestAnnotation)] = found.digest;
  } else {
    annotations.erase(std::string(api::kRevisionDigestAnnotation));
  }

  if (mutated == pod) {
    result.outcome = "unchanged";
    return result;
  }
  result.outcome = found.state == RevisionLookup::State::kMissing ? "waiting" : "injected";
  result.pod = std::move(mutated);
  return result;
}

}  // namespace modelplane::controller
