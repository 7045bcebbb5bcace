#include "operator/controllers/workload_inventory.h"

#include <set>

#include "core/api/object_key.h"
#include "core/api/serving_pod.h"
#include "core/json/json_lookup.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

constexpr char kTemplateRevision[] = "modelplane.io/template-revision";
constexpr char kControllerUid[] = "modelplane.io/controller-uid";
constexpr char kUid[] = "modelplane.io/uid";

std::string MetadataString(const json& object, std::string_view key) {
  return core::StringMember(object, {"metadata", key});
}

std::string ControllerUid(const json& object) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return {};
  const auto owners = metadata->find("ownerReferences");
  if (owners == metadata->end() || !owners->is_array()) return {};
  for (const json& owner : *owners) {
    if (owner.is_object() && owner.value("controller", false)) return owner.value("uid", "");
  }
  return {};
}

const json* TemplateOf(const json& object) {
  for (const char* root : {"spec", "data"}) {
    const auto first = object.find(root);
    if (first == object.end() || !first->is_object()) continue;
    const json* holder = &*first;
    if (std::string_view(root) == "data") {
      const auto spec = holder->find("spec");
      if (spec == holder->end() || !spec->is_object()) continue;
      holder = &*spec;
    }
    const auto pod_template = holder->find("template");
    if (pod_template != holder->end() && pod_template->is_object()) return &*pod_template;
  }
  return nullptr;
}

core::IndexFunction TemplateRevisionIndex() {
  return [](const json& object) -> std::vector<std::string> {
    const json* pod_template = TemplateOf(object);
    if (pod_template == nullptr) return {};
    const std::string ns = MetadataString(object, "namespace");
    const std::string name = TemplateRevision(*pod_template, ns);
    if (name.empty()) return {};
    return {core::api::ObjectKey(ns, name)};
  };
}

core::IndexFunction UidIndex() {
  return [](const json& object) -> std::vector<std::string> {
    const std::string uid = MetadataString(object, "uid");
    if (uid.empty()) return {};
    return {uid};
  };
}

bool PodReady(const json& pod) {
  const auto status = pod.find("status");
  if (status == pod.end() || !status->is_object()) return false;
  const auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return false;
  for (const json& condition : *conditions) {
    if (condition.is_object() && condition.value("type", "") == "Ready") {
      return condition.value("status", "") == "True";
    }
  }
  return false;
}

std::vector<const json*> Pointers(const std::vector<core::ObjectPtr>& objects) {
  std::vector<const json*> out;
  out.reserve(objects.size());
  for (const core::ObjectPtr& object : objects) out.push_back(object.get());
  return out;
}

}  // namespace

core::IndexFunction ControllerUidIndex() {
  return [](const json& object) -> std::vector<std::string> {
    const std::string uid = ControllerUid(object);
    if (uid.empty()) return {};
    return {uid};
  };
}

void WorkloadInventory::AddIndexers() {
  for (core::Informer* workloads : {&informers_.deployments, &informers_.stateful_sets}) {
    workloads->AddIndexer(kTemplateRevision, TemplateRevisionIndex());
    workloads->AddIndexer(kUid, UidIndex());
  }
  for (core::Informer* history : {&informers_.replica_sets, &informers_.controller_revisions}) {
    history->AddIndexer(kTemplateRevision, TemplateRevisionIndex());
    history->AddIndexer(kControllerUid, ControllerUidIndex());
  }
  informers_.replica_sets.AddIndexer(kUid, UidIndex());
}

std::optional<Workload> WorkloadInventory::Read(const json& object, std::string_view kind) const {
  const std::string uid = MetadataString(object, "uid");
  if (kind == kKindDeployment) {
    const auto history = informers_.replica_sets.store().ByIndex(kControllerUid, uid);
    return ReadDeployment(object, Pointers(history));
  }
  const auto history = informers_.controller_revisions.store().ByIndex(kControllerUid, uid);
  return ReadStatefulSet(object, Pointers(history));
}

std::vector<WorkloadPod> WorkloadInventory::PodsOf(const json& object,
                                                   std::string_view kind) const {
  std::vector<std::string> owners;
  const std::string uid = MetadataString(object, "uid");
  if (kind == kKindDeployment) {
    for (const core::ObjectPtr& replica_set :
         informers_.replica_sets.store().ByIndex(kControllerUid, uid)) {
      owners.push_back(MetadataString(*replica_set, "uid"));
    }
  } else {
    owners.push_back(uid);
  }
  std::vector<WorkloadPod> pods;
  const std::string ns = MetadataString(object, "namespace");
  for (const std::string& owner : owners) {
    for (const core::ObjectPtr& pod : informers_.pods.store().ByIndex(kPodsByOwner, owner)) {
      WorkloadPod entry{.uid = MetadataString(*pod, "uid"), .ready = PodReady(*pod)};
      if (const auto spec = pod->find("spec"); spec != pod->end() && spec->is_object()) {
        entry.node = spec->value("nodeName", "");
      }
      const auto metadata = pod->find("metadata");
      if (metadata != pod->end() && metadata->is_object() && metadata->contains("annotations") &&
          (*metadata)["annotations"].is_object()) {
        const std::string value =
            (*metadata)["annotations"].value(std::string(core::api::kRevisionAnnotation), "");
        if (auto reference = core::api::ParseRevisionAnnotation(value, ns)) {
          entry.revision = reference->name;
        }
      }
      pods.push_back(std::move(entry));
    }
  }
  return pods;
}

std::vector<WorkloadPods> WorkloadInventory::ForRevision(
    const std::string& revision_key, const std::vector<core::api::WorkloadUse>& previous) const {
  const auto slash = revision_key.find('/');
  const std::string name = revision_key.substr(slash + 1);
  std::vector<WorkloadPods> found;
  struct Source {
    std::string_view kind;
    core::Informer& workloads;
    core::Informer& history;
  };
  for (const Source& source :
       {Source{kKindDeployment, informers_.deployments, informers_.replica_sets},
        Source{kKindStatefulSet, informers_.stateful_sets, informers_.controller_revisions}}) {
    std::set<std::string> uids;
    for (const core::ObjectPtr& object :
         source.workloads.store().ByIndex(kTemplateRevision, revision_key)) {
      uids.insert(MetadataString(*object, "uid"));
    }
    for (const core::ObjectPtr& object :
         source.history.store().ByIndex(kTemplateRevision, revision_key)) {
      uids.insert(ControllerUid(*object));
    }
    for (const std::string& uid : uids) {
      for (const core::ObjectPtr& object : source.workloads.store().ByIndex(kUid, uid)) {
        auto workload = Read(*object, source.kind);
        if (!workload ||
            (workload->current_revision != name && workload->previous_revision != name)) {
          continue;
        }
        WorkloadPods entry{.workload = std::move(*workload), .pods = PodsOf(*object, source.kind)};
        for (const core::api::WorkloadUse& use : previous) {
          if (use.kind == entry.workload.kind && use.name == entry.workload.name &&
              use.role == "previous") {
            entry.completed_at = use.completed_at;
          }
        }
        found.push_back(std::move(entry));
      }
    }
  }
  return found;
}

std::vector<std::string> WorkloadInventory::RevisionKeysOf(const json& object,
                                                           std::string_view kind) const {
  std::vector<std::string> keys;
  auto workload = Read(object, kind);
  if (!workload) return keys;
  for (const std::string& name : {workload->current_revision, workload->previous_revision}) {
    if (!name.empty()) keys.push_back(core::api::ObjectKey(workload->namespace_name, name));
  }
  return keys;
}

std::vector<std::string> WorkloadInventory::RevisionKeysOfPodOwner(const json& pod) const {
  const std::string owner = ControllerUid(pod);
  if (owner.empty()) return {};
  for (const core::ObjectPtr& set : informers_.stateful_sets.store().ByIndex(kUid, owner)) {
    return RevisionKeysOf(*set, kKindStatefulSet);
  }
  for (const core::ObjectPtr& replica_set : informers_.replica_sets.store().ByIndex(kUid, owner)) {
    for (const core::ObjectPtr& deployment :
         informers_.deployments.store().ByIndex(kUid, ControllerUid(*replica_set))) {
      return RevisionKeysOf(*deployment, kKindDeployment);
    }
  }
  return {};
}

std::optional<std::string> WorkloadInventory::WorkloadKeyOfPod(const json& pod) const {
  const std::string owner = ControllerUid(pod);
  if (owner.empty()) return std::nullopt;
  const std::string ns = MetadataString(pod, "namespace");
  for (const core::ObjectPtr& set : informers_.stateful_sets.store().ByIndex(kUid, owner)) {
    return std::string(kKindStatefulSet) + "/" + ns + "/" + MetadataString(*set, "name");
  }
  for (const core::ObjectPtr& replica_set : informers_.replica_sets.store().ByIndex(kUid, owner)) {
    for (const core::ObjectPtr& deployment :
         informers_.deployments.store().ByIndex(kUid, ControllerUid(*replica_set))) {
      return std::string(kKindDeployment) + "/" + ns + "/" + MetadataString(*deployment, "name");
    }
  }
  return std::nullopt;
}

}  // namespace modelplane::controller
