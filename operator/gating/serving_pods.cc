#include "operator/gating/serving_pods.h"

#include <set>
#include <string_view>

#include "core/api/object_key.h"
#include "core/api/serving_pod.h"
#include "core/json/json_lookup.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

void CopyMember(const json& from, json& to, const char* key) {
  if (!from.is_object()) return;
  if (const auto found = from.find(key); found != from.end()) to[key] = *found;
}

json TrimContainers(const json& containers) {
  json out = json::array();
  if (!containers.is_array()) return out;
  for (const json& container : containers) {
    json trimmed = json::object();
    CopyMember(container, trimmed, "name");
    CopyMember(container, trimmed, "resources");
    CopyMember(container, trimmed, "restartPolicy");
    out.push_back(std::move(trimmed));
  }
  return out;
}

}  // namespace

json TrimPod(json pod) {
  if (!pod.is_object()) return pod;
  json trimmed = json::object();
  CopyMember(pod, trimmed, "apiVersion");
  CopyMember(pod, trimmed, "kind");
  const json& metadata = pod.contains("metadata") ? pod["metadata"] : json();
  json& meta = trimmed["metadata"] = json::object();
  for (const char* key : {"name", "namespace", "uid", "resourceVersion", "labels",
                          "creationTimestamp", "deletionTimestamp", "ownerReferences"}) {
    CopyMember(metadata, meta, key);
  }
  if (metadata.is_object() && metadata.contains("annotations") &&
      metadata["annotations"].is_object()) {
    json annotations = json::object();
    for (const auto& [key, value] : metadata["annotations"].items()) {
      if (std::string_view(key).starts_with("modelplane.io/")) annotations[key] = value;
    }
    if (!annotations.empty()) meta["annotations"] = std::move(annotations);
  }
  const json& spec = pod.contains("spec") ? pod["spec"] : json();
  json& out_spec = trimmed["spec"] = json::object();
  for (const char* key : {"nodeName", "schedulerName", "schedulingGates", "readinessGates",
                          "nodeSelector", "affinity", "tolerations", "overhead", "priority"}) {
    CopyMember(spec, out_spec, key);
  }
  if (spec.is_object()) {
    if (spec.contains("containers")) out_spec["containers"] = TrimContainers(spec["containers"]);
    if (spec.contains("initContainers")) {
      out_spec["initContainers"] = TrimContainers(spec["initContainers"]);
    }
  }
  if (pod.contains("status") && pod["status"].is_object()) {
    json& status = trimmed["status"] = json::object();
    CopyMember(pod["status"], status, "phase");
    // Readiness, for the workloads' status; nothing else of the conditions.
    if (pod["status"].contains("conditions") && pod["status"]["conditions"].is_array()) {
      json conditions = json::array();
      for (const json& condition : pod["status"]["conditions"]) {
        if (!condition.is_object()) continue;
        const std::string type = condition.value("type", "");
        if (type == "Ready" || type == core::api::kWeightsReadyCondition) {
          conditions.push_back({{"type", type}, {"status", condition.value("status", "")}});
        }
      }
      if (!conditions.empty()) status["conditions"] = std::move(conditions);
    }
  }
  return trimmed;
}

bool HasWeightsGate(const json& pod) {
  const auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return false;
  const auto gates = spec->find("schedulingGates");
  if (gates == spec->end() || !gates->is_array()) return false;
  for (const json& gate : *gates) {
    if (gate.is_object() && gate.value("name", "") == core::api::kWeightsSchedulingGate) {
      return true;
    }
  }
  return false;
}

std::optional<std::string> RevisionKeyOfPod(const json& pod) {
  const auto metadata = pod.find("metadata");
  if (metadata == pod.end() || !metadata->is_object()) return std::nullopt;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return std::nullopt;
  const auto value = annotations->find(core::api::kRevisionAnnotation);
  if (value == annotations->end() || !value->is_string()) return std::nullopt;
  auto reference = core::api::ParseRevisionAnnotation(value->get<std::string>(),
                                                      metadata->value("namespace", ""));
  if (!reference) return std::nullopt;
  return core::api::ObjectKey(reference->namespace_name, reference->name);
}

core::IndexFunction GatedPodsByAdapterIndex() {
  return [](const json& pod) -> std::vector<std::string> {
    if (!HasWeightsGate(pod)) return {};
    const auto revision = RevisionKeyOfPod(pod);
    if (!revision) return {};
    const json* annotations = core::FindMember(pod, {"metadata", "annotations"});
    auto adapters = core::api::ParseAdaptersAnnotation(
        core::StringMember(*annotations, {core::api::kAdaptersAnnotation}),
        core::StringMember(pod, {"metadata", "namespace"}),
        revision->substr(revision->find('/') + 1));
    std::vector<std::string> keys;
    if (!adapters) return keys;
    for (const core::api::RevisionReference& adapter : *adapters) {
      keys.push_back(core::api::ObjectKey(adapter.namespace_name, adapter.name));
    }
    return keys;
  };
}

std::vector<std::string> RevisionsWaitingForAdapters(const core::ObjectStore& pods,
                                                     const std::vector<std::string>& adapter_keys) {
  std::set<std::string> revisions;
  for (const std::string& adapter : adapter_keys) {
    for (const core::ObjectPtr& pod : pods.ByIndex(kGatedPodsByAdapter, adapter)) {
      if (auto revision = RevisionKeyOfPod(*pod)) revisions.insert(std::move(*revision));
    }
  }
  return {revisions.begin(), revisions.end()};
}

core::IndexFunction PodsByRevisionIndex() {
  return [](const json& pod) -> std::vector<std::string> {
    if (auto key = RevisionKeyOfPod(pod)) return {*key};
    return {};
  };
}

core::IndexFunction GatedPodsByRevisionIndex() {
  return [](const json& pod) -> std::vector<std::string> {
    if (!HasWeightsGate(pod)) return {};
    if (auto key = RevisionKeyOfPod(pod)) return {*key};
    return {};
  };
}

}  // namespace modelplane::controller
