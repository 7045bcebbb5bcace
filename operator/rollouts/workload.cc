#include "operator/rollouts/workload.h"

#include <algorithm>
#include <charconv>

#include "core/api/serving_pod.h"
#include "core/json/json_lookup.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

std::int64_t ParseInteger(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() ? value : 0;
}

// maxSurge: an integer, or a percentage of replicas rounded up; Kubernetes' default is 25%.
std::int32_t ResolveSurge(const json* value, std::int32_t replicas) {
  std::string text = "25%";
  if (value != nullptr && value->is_number_integer()) {
    return static_cast<std::int32_t>(
        std::clamp<std::int64_t>(value->get<std::int64_t>(), 0, 1 << 20));
  }
  if (value != nullptr && value->is_string()) text = value->get<std::string>();
  if (text.empty() || text.back() != '%') {
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(ParseInteger(text), 0, 1 << 20));
  }
  const std::int64_t percent =
      std::clamp<std::int64_t>(ParseInteger(text.substr(0, text.size() - 1)), 0, 100);
  return static_cast<std::int32_t>((static_cast<std::int64_t>(replicas) * percent + 99) / 100);
}

// The newest history entry (by its number, descending) naming a revision other than `current`.
std::string PreviousRevision(std::vector<std::pair<std::int64_t, std::string>> history,
                             const std::string& current) {
  std::sort(history.begin(), history.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [number, revision] : history) {
    if (!revision.empty() && revision != current) return revision;
  }
  return {};
}

Workload Common(const json& object, std::string_view kind) {
  Workload workload;
  workload.kind = std::string(kind);
  workload.namespace_name = core::StringMember(object, {"metadata", "namespace"});
  workload.name = core::StringMember(object, {"metadata", "name"});
  workload.uid = core::StringMember(object, {"metadata", "uid"});
  workload.replicas =
      static_cast<std::int32_t>(core::IntegerMember(object, {"spec", "replicas"}, 1));
  if (const json* pod_template = core::FindMember(object, {"spec", "template"})) {
    workload.current_revision = TemplateRevision(*pod_template, workload.namespace_name);
    workload.node_selector = core::StringMapMember(*pod_template, {"spec", "nodeSelector"});
  }
  return workload;
}

void CopyMember(const json& from, json& to, const char* key) {
  if (!from.is_object()) return;
  if (const auto found = from.find(key); found != from.end()) to[key] = *found;
}

// A pod template with only modelplane's annotations and the node selector.
json TrimTemplate(const json& pod_template) {
  json out = json::object();
  if (const json* annotations = core::FindMember(pod_template, {"metadata", "annotations"});
      annotations != nullptr && annotations->is_object()) {
    json kept = json::object();
    for (const auto& [key, value] : annotations->items()) {
      if (std::string_view(key).starts_with("modelplane.io/")) kept[key] = value;
    }
    out["metadata"] = {{"annotations", std::move(kept)}};
  }
  if (const json* selector = core::FindMember(pod_template, {"spec", "nodeSelector"})) {
    out["spec"] = {{"nodeSelector", *selector}};
  }
  return out;
}

}  // namespace

std::string TemplateRevision(const json& pod_template, const std::string& namespace_name) {
  const std::string value =
      core::StringMember(pod_template, {"metadata", "annotations", core::api::kRevisionAnnotation});
  if (value.empty()) return {};
  auto reference = core::api::ParseRevisionAnnotation(value, namespace_name);
  if (!reference) return {};
  return reference->name;
}

std::optional<Workload> ReadDeployment(const json& deployment,
                                       const std::vector<const json*>& replica_sets) {
  Workload workload = Common(deployment, kKindDeployment);
  if (workload.name.empty()) return std::nullopt;
  workload.paused = core::BoolMember(deployment, {"spec", "paused"});
  if (core::StringMember(deployment, {"spec", "strategy", "type"}) != "Recreate") {
    workload.max_surge = ResolveSurge(
        core::FindMember(deployment, {"spec", "strategy", "rollingUpdate", "maxSurge"}),
        workload.replicas);
  }
  const std::int64_t generation = core::IntegerMember(deployment, {"metadata", "generation"});
  workload.complete =
      core::IntegerMember(deployment, {"status", "observedGeneration"}) >= generation &&
      core::IntegerMember(deployment, {"status", "updatedReplicas"}) == workload.replicas &&
      core::IntegerMember(deployment, {"status", "replicas"}) == workload.replicas &&
      core::IntegerMember(deployment, {"status", "availableReplicas"}) == workload.replicas;
  std::vector<std::pair<std::int64_t, std::string>> history;
  for (const json* replica_set : replica_sets) {
    const json* pod_template = core::FindMember(*replica_set, {"spec", "template"});
    history.emplace_back(
        ParseInteger(core::StringMember(
            *replica_set, {"metadata", "annotations", "deployment.kubernetes.io/revision"})),
        pod_template != nullptr ? TemplateRevision(*pod_template, workload.namespace_name)
                                : std::string());
  }
  workload.previous_revision = PreviousRevision(std::move(history), workload.current_revision);
  return workload;
}

std::optional<Workload> ReadStatefulSet(const json& stateful_set,
                                        const std::vector<const json*>& history_objects) {
  Workload workload = Common(stateful_set, kKindStatefulSet);
  if (workload.name.empty()) return std::nullopt;
  const std::int64_t generation = core::IntegerMember(stateful_set, {"metadata", "generation"});
  const std::string current = core::StringMember(stateful_set, {"status", "currentRevision"});
  workload.complete =
      core::IntegerMember(stateful_set, {"status", "observedGeneration"}) >= generation &&
      !current.empty() &&
      current == core::StringMember(stateful_set, {"status", "updateRevision"}) &&
      core::IntegerMember(stateful_set, {"status", "updatedReplicas"}) == workload.replicas &&
      core::IntegerMember(stateful_set, {"status", "readyReplicas"}) == workload.replicas;
  std::vector<std::pair<std::int64_t, std::string>> history;
  for (const json* revision : history_objects) {
    const json* pod_template = core::FindMember(*revision, {"data", "spec", "template"});
    history.emplace_back(core::IntegerMember(*revision, {"revision"}),
                         pod_template != nullptr
                             ? TemplateRevision(*pod_template, workload.namespace_name)
                             : std::string());
  }
  workload.previous_revision = PreviousRevision(std::move(history), workload.current_revision);
  return workload;
}

json TrimWorkload(json object) {
  if (!object.is_object()) return object;
  json out = json::object();
  CopyMember(object, out, "apiVersion");
  CopyMember(object, out, "kind");
  CopyMember(object, out, "revision");  // ControllerRevision
  const json metadata = object.value("metadata", json::object());
  json& meta = out["metadata"] = json::object();
  for (const char* key : {"name", "namespace", "uid", "generation", "resourceVersion",
                          "ownerReferences", "deletionTimestamp"}) {
    CopyMember(metadata, meta, key);
  }
  if (const json* revision =
          core::FindMember(metadata, {"annotations", "deployment.kubernetes.io/revision"})) {
    meta["annotations"] = {{"deployment.kubernetes.io/revision", *revision}};
  }
  if (const json* spec = core::FindMember(object, {"spec"}); spec != nullptr && spec->is_object()) {
    json& out_spec = out["spec"] = json::object();
    for (const char* key : {"replicas", "paused", "strategy", "updateStrategy", "selector"}) {
      CopyMember(*spec, out_spec, key);
    }
    if (const json* pod_template = core::FindMember(*spec, {"template"})) {
      out_spec["template"] = TrimTemplate(*pod_template);
    }
  }
  if (const json* pod_template = core::FindMember(object, {"data", "spec", "template"})) {
    out["data"] = {{"spec", {{"template", TrimTemplate(*pod_template)}}}};
  }
  if (const json* status = core::FindMember(object, {"status"});
      status != nullptr && status->is_object()) {
    json& out_status = out["status"] = json::object();
    for (const char* key :
         {"observedGeneration", "replicas", "updatedReplicas", "availableReplicas", "readyReplicas",
          "currentRevision", "updateRevision"}) {
      CopyMember(*status, out_status, key);
    }
  }
  return out;
}

}  // namespace modelplane::controller
