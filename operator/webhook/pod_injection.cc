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

// A read-only volume the pod gets: its revision's or an adapter's.
struct RevisionVolume {
  std::string volume_name;
  std::string revision_name;
  std::string digest;  // empty while the revision does not exist yet
  std::string mount_path;
};

json VolumeFor(const RevisionVolume& wanted, const InjectionOptions& options) {
  if (options.volume_mode == WeightsVolumeMode::kHostPath) {
    const std::string hex = wanted.digest.substr(wanted.digest.find(':') + 1);
    return {{"name", wanted.volume_name},
            {"hostPath",
             {{"path", fmt::format("{}/models/{}", options.host_cache_root, hex)},
              {"type", "Directory"}}}};
  }
  return {{"name", wanted.volume_name},
          {"csi",
           {{"driver", api::kCsiDriverName},
            {"readOnly", true},
            {"volumeAttributes", {{api::kRevisionVolumeAttribute, wanted.revision_name}}}}}};
}

// A variable the kubelet reads from one of the pod's annotations when the container starts.
json FromAnnotation(std::string_view variable, std::string_view annotation) {
  return {{"name", variable},
          {"valueFrom",
           {{"fieldRef", {{"fieldPath", fmt::format("metadata.annotations['{}']", annotation)}}}}}};
}

// Why a pod naming this revision (`what` says in which role) may not be admitted; nullopt when
// it may, with a warning added when the revision does not exist yet.
std::optional<std::string> LookupProblem(const RevisionLookup& found, std::string_view what,
                                         const std::string& key, const InjectionOptions& options,
                                         std::vector<std::string>& warnings) {
  switch (found.state) {
    case RevisionLookup::State::kInvalid:
      return fmt::format("{} {} is invalid: {}", what, key, found.problem);
    case RevisionLookup::State::kRevoked: return fmt::format("{} {} is revoked", what, key);
    case RevisionLookup::State::kMissing:
      if (options.volume_mode == WeightsVolumeMode::kHostPath) {
        return fmt::format(
            "{} {} does not exist; in hostPath mode the revision must exist "
            "before its pods (its digest names the folder to mount)",
            what, key);
      }
      warnings.push_back(fmt::format(
          "{} {} does not exist yet: the pod waits, gated, until it is created and staged", what,
          key));
      return std::nullopt;
    case RevisionLookup::State::kValid: return std::nullopt;
  }
  return std::nullopt;
}

// `inner` is `outer` or below it.
bool IsWithin(std::string_view inner, std::string_view outer) {
  return inner == outer ||
         (inner.starts_with(outer) && inner.size() > outer.size() && inner[outer.size()] == '/');
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
  auto adapters = api::ParseAdaptersAnnotation(Annotation(pod, api::kAdaptersAnnotation),
                                               pod_namespace, reference->name);
  if (!adapters) return Refuse(adapters.error().message(), key);

  const RevisionLookup found = lookup(reference->namespace_name, reference->name);
  InjectionResult result{.revision = key};
  if (auto problem = LookupProblem(found, "ModelRevision", key, options, result.warnings)) {
    return Refuse(std::move(*problem), key);
  }
  bool waiting = found.state == RevisionLookup::State::kMissing;

  const json* pod_annotations = core::FindMember(pod, {"metadata", "annotations"});
  const std::string mount_path =
      api::MountPathOf(pod_annotations != nullptr ? *pod_annotations : json(), reference->name);
  if (auto problem = MountPathProblem(mount_path)) {
    return Refuse(fmt::format("annotation {}: \"{}\" {}", api::kMountPathAnnotation,
                              mount_path.substr(0, 200), *problem),
                  key);
  }
  // vLLM reads a --lora-modules item with ',' as JSON, and splits the others at '='.
  if (!adapters->empty() && mount_path.find_first_of(" \t=,") != std::string::npos) {
    return Refuse(fmt::format("annotation {}: \"{}\" must not contain blanks, '=' or ',' in a "
                              "pod with adapters: their paths go in a space-separated list of "
                              "name=path items",
                              api::kMountPathAnnotation, mount_path.substr(0, 200)),
                  key);
  }

  std::vector<RevisionVolume> wanted = {{.volume_name = std::string(api::kWeightsVolumeName),
                                         .revision_name = reference->name,
                                         .digest = found.digest,
                                         .mount_path = mount_path}};
  std::vector<api::LoraModule> modules;
  for (std::size_t index = 0; index < adapters->size(); ++index) {
    const api::RevisionReference& adapter = (*adapters)[index];
    const std::string adapter_key = core::api::ObjectKey(adapter.namespace_name, adapter.name);
    const RevisionLookup adapter_found = lookup(adapter.namespace_name, adapter.name);
    if (auto problem = LookupProblem(adapter_found, "adapter ModelRevision", adapter_key, options,
                                     result.warnings)) {
      return Refuse(std::move(*problem), key);
    }
    if (adapter_found.state == RevisionLookup::State::kValid) {
      if (adapter_found.base_digest.empty()) {
        return Refuse(fmt::format("ModelRevision {} is not an adapter (it has no spec.base); {} "
                                  "lists LoRA adapter revisions only",
                                  adapter_key, api::kAdaptersAnnotation),
                      key);
      }
      // Known both: an adapter trained on other weights would load and serve garbage.
      if (found.state == RevisionLookup::State::kValid &&
          adapter_found.base_digest != found.digest) {
        return Refuse(fmt::format("adapter {} applies to base {}, not to revision {}'s {}",
                                  adapter_key, adapter_found.base_digest, key, found.digest),
                      key);
      }
    } else {
      waiting = true;
    }
    const std::string path = api::AdapterMountPath(mount_path, adapter.name);
    if (auto problem = MountPathProblem(path)) {
      return Refuse(fmt::format("adapter {} would be mounted at \"{}\", which {}", adapter_key,
                                path.substr(0, 200), *problem),
                    key);
    }
    if (IsWithin(path, mount_path)) {
      return Refuse(fmt::format("adapter {} would be mounted at {}, inside the read-only mount "
                                "of {} at {}; set annotation {} to another path",
                                adapter_key, path, key, mount_path, api::kMountPathAnnotation),
                    key);
    }
    if (adapter_found.state == RevisionLookup::State::kValid) {
      modules.push_back(
          {.name = api::AdapterEngineName(adapter.name, adapter_found.digest), .path = path});
    }
    wanted.push_back({.volume_name = api::AdapterVolumeName(index),
                      .revision_name = adapter.name,
                      .digest = adapter_found.digest,
                      .mount_path = path});
  }

  json mutated = pod;
  json& spec = mutated["spec"];
  json& containers = ArrayMember(spec, "containers");
  std::set<std::string> targets;
  if (HasAnnotation(pod, api::kContainersAnnotation)) {
    for (const std::string& name :
         api::SplitAnnotationList(Annotation(pod, api::kContainersAnnotation))) {
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
  for (const RevisionVolume& volume : wanted) {
    const auto existing = std::find_if(volumes.begin(), volumes.end(), [&](const json& present) {
      return core::StringMember(present, {"name"}) == volume.volume_name;
    });
    if (existing == volumes.end()) {
      volumes.push_back(VolumeFor(volume, options));
    } else if (!IsOurVolume(*existing)) {
      return Refuse(fmt::format("the pod already has a volume named {} that is not modelplane's",
                                volume.volume_name),
                    key);
    }
  }

  for (json& container : containers) {
    if (!container.is_object()) continue;
    const std::string name = core::StringMember(container, {"name"});
    if (!targets.empty() && !targets.contains(name)) continue;
    json& mounts = ArrayMember(container, "volumeMounts");
    for (const RevisionVolume& volume : wanted) {
      if (ContainsNamed(mounts, "name", volume.volume_name)) continue;
      if (ContainsNamed(mounts, "mountPath", volume.mount_path)) {
        return Refuse(
            fmt::format("container \"{}\" already mounts something at {}", name, volume.mount_path),
            key);
      }
      mounts.push_back(
          {{"name", volume.volume_name}, {"mountPath", volume.mount_path}, {"readOnly", true}});
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
    add_first(FromAnnotation(api::kRevisionDigestEnvironment, api::kRevisionDigestAnnotation));
    if (!adapters->empty()) {
      add_first(FromAnnotation(api::kLoraModulesEnvironment, api::kLoraModulesAnnotation));
    }
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
  // The same for the adapters' names, which are their digests'.
  if (!adapters->empty() && modules.size() == adapters->size()) {
    annotations[std::string(api::kLoraModulesAnnotation)] = api::LoraModulesValue(modules);
  } else {
    annotations.erase(std::string(api::kLoraModulesAnnotation));
  }

  if (mutated == pod) {
    result.outcome = "unchanged";
    return result;
  }
  result.outcome = waiting ? "waiting" : "injected";
  result.pod = std::move(mutated);
  return result;
}

}  // namespace modelplane::controller
