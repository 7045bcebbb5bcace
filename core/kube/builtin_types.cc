#include "core/kube/builtin_types.h"

#include "core/json/json_object_reader.h"

namespace modelplane::core {

using nlohmann::json;

namespace {

// Reads typed fields out of an untrusted document: absent is fine, a wrong type is an error
// naming the path.
class FieldReader {
 public:
  explicit FieldReader(const json& root) : root_(root) {}

  const json* At(std::initializer_list<const char*> path) {
    const json* node = &root_;
    for (const char* key : path) {
      if (!node->is_object()) return nullptr;
      auto found = node->find(key);
      if (found == node->end() || found->is_null()) return nullptr;
      node = &*found;
    }
    return node;
  }

  std::string String(std::initializer_list<const char*> path) {
    const json* node = At(path);
    if (node == nullptr) return {};
    if (!node->is_string()) return Fail(path, "a string"), std::string();
    return node->get<std::string>();
  }

  std::int64_t Integer(std::initializer_list<const char*> path) {
    const json* node = At(path);
    if (node == nullptr) return 0;
    if (!node->is_number_integer()) return Fail(path, "an integer"), 0;
    return node->get<std::int64_t>();
  }

  bool Bool(std::initializer_list<const char*> path) {
    const json* node = At(path);
    if (node == nullptr) return false;
    if (!node->is_boolean()) return Fail(path, "a boolean"), false;
    return node->get<bool>();
  }

  const json* Array(std::initializer_list<const char*> path) {
    const json* node = At(path);
    if (node == nullptr) return nullptr;
    if (!node->is_array()) return Fail(path, "an array"), nullptr;
    return node;
  }

  void Fail(std::initializer_list<const char*> path, const char* expected) {
    if (error_) return;
    std::string joined;
    for (const char* key : path) joined += (joined.empty() ? "" : ".") + std::string(key);
    error_ = Error(ErrorCode::kInvalidArgument, joined + ": must be " + expected);
  }

  [[nodiscard]] const std::optional<Error>& error() const { return error_; }

 private:
  const json& root_;
  std::optional<Error> error_;
};

Result<api::ObjectMeta> MetaOf(const json& value) {
  const json empty = json::object();
  const json& metadata = value.contains("metadata") ? value["metadata"] : empty;
  auto reader = core::JsonObjectReader::Create(metadata, "metadata");
  if (!reader) return std::unexpected(reader.error());
  return api::ObjectMetaFromJson(*reader);
}

template <typename T>
Result<T> Finish(T typed, FieldReader& fields, const json& value) {
  if (fields.error()) return std::unexpected(*fields.error());
  auto meta = MetaOf(value);
  if (!meta) return std::unexpected(meta.error());
  typed.metadata = std::move(*meta);
  typed.raw = value;
  return typed;
}

}  // namespace

const PodCondition* Pod::FindCondition(const std::string& type) const {
  for (const auto& condition : conditions) {
    if (condition.type == type) return &condition;
  }
  return nullptr;
}

Result<Pod> PodFromJson(const json& value) {
  if (!value.is_object()) return MakeError(ErrorCode::kInvalidArgument, "Pod must be an object");
  FieldReader fields(value);
  Pod pod;
  pod.node_name = fields.String({"spec", "nodeName"});
  pod.scheduler_name = fields.String({"spec", "schedulerName"});
  pod.phase = fields.String({"status", "phase"});
  if (const json* gates = fields.Array({"spec", "schedulingGates"})) {
    for (const auto& gate : *gates) {
      FieldReader item(gate);
      pod.scheduling_gates.push_back(item.String({"name"}));
    }
  }
  if (const json* gates = fields.Array({"spec", "readinessGates"})) {
    for (const auto& gate : *gates) {
      FieldReader item(gate);
      pod.readiness_gates.push_back(item.String({"conditionType"}));
    }
  }
  if (const json* conditions = fields.Array({"status", "conditions"})) {
    for (const auto& entry : *conditions) {
      FieldReader item(entry);
      pod.conditions.push_back({item.String({"type"}), item.String({"status"}),
                                item.String({"reason"}), item.String({"message"})});
      if (item.error()) return std::unexpected(item.error()->Wrap("status.conditions"));
    }
  }
  return Finish(std::move(pod), fields, value);
}

Result<Node> NodeFromJson(const json& value) {
  if (!value.is_object()) return MakeError(ErrorCode::kInvalidArgument, "Node must be an object");
  FieldReader fields(value);
  Node node;
  node.unschedulable = fields.Bool({"spec", "unschedulable"});
  if (const json* allocatable = fields.At({"status", "allocatable"});
      allocatable != nullptr && allocatable->is_object()) {
    for (const auto& [name, quantity] : allocatable->items()) {
      if (quantity.is_string()) node.allocatable[name] = quantity.get<std::string>();
    }
  }
  if (const json* conditions = fields.Array({"status", "conditions"})) {
    for (const auto& entry : *conditions) {
      FieldReader item(entry);
      if (item.String({"type"}) == "Ready") node.ready = item.String({"status"}) == "True";
    }
  }
  return Finish(std::move(node), fields, value);
}

Result<Lease> LeaseFromJson(const json& value) {
  if (!value.is_object()) return MakeError(ErrorCode::kInvalidArgument, "Lease must be an object");
  FieldReader fields(value);
  Lease lease;
  lease.holder_identity = fields.String({"spec", "holderIdentity"});
  lease.lease_duration_seconds = fields.Integer({"spec", "leaseDurationSeconds"});
  lease.acquire_time = fields.String({"spec", "acquireTime"});
  lease.renew_time = fields.String({"spec", "renewTime"});
  lease.lease_transitions = fields.Integer({"spec", "leaseTransitions"});
  return Finish(std::move(lease), fields, value);
}

Result<Event> EventFromJson(const json& value) {
  if (!value.is_object()) return MakeError(ErrorCode::kInvalidArgument, "Event must be an object");
  FieldReader fields(value);
  Event event;
  event.type = fields.String({"type"});
  event.reason = fields.String({"reason"});
  event.action = fields.String({"action"});
  event.note = fields.String({"note"});
  event.regarding = {fields.String({"regarding", "apiVersion"}),
                     fields.String({"regarding", "kind"}),
                     fields.String({"regarding", "namespace"}),
                     fields.String({"regarding", "name"}), fields.String({"regarding", "uid"})};
  event.series_count = fields.Integer({"series", "count"});
  return Finish(std::move(event), fields, value);
}

namespace {
json WithMeta(const json& raw, const api::ObjectMeta& meta) {
  json out = raw.is_object() ? raw : json::object();
  out["metadata"] = api::ToJson(meta);
  return out;
}
}  // namespace

json ToJson(const Pod& pod) {
  json out = WithMeta(pod.raw, pod.metadata);
  out["apiVersion"] = "v1";
  out["kind"] = "Pod";
  if (!pod.node_name.empty()) out["spec"]["nodeName"] = pod.node_name;
  if (!pod.scheduler_name.empty()) out["spec"]["schedulerName"] = pod.scheduler_name;
  json gates = json::array();
  for (const auto& gate : pod.scheduling_gates) gates.push_back({{"name", gate}});
  if (gates.empty()) {
    if (out.contains("spec")) out["spec"].erase("schedulingGates");
  } else {
    out["spec"]["schedulingGates"] = gates;
  }
  if (!pod.readiness_gates.empty()) {
    json readiness = json::array();
    for (const auto& type : pod.readiness_gates) readiness.push_back({{"conditionType", type}});
    out["spec"]["readinessGates"] = readiness;
  }
  if (!pod.phase.empty()) out["status"]["phase"] = pod.phase;
  if (!pod.conditions.empty()) {
    // Merge into the existing conditions by type, so fields we do not model survive.
    json conditions = out.contains("status") && out["status"].contains("conditions") &&
                              out["status"]["conditions"].is_array()
                          ? out["status"]["conditions"]
                          : json::array();
    for (const auto& condition : pod.conditions) {
      json* slot = nullptr;
      for (auto& existing : conditions) {
        if (existing.is_object() && existing.contains("type") &&
            existing["type"] == condition.type) {
          slot = &existing;
        }
      }
      if (slot == nullptr) slot = &conditions.emplace_back(json::object());
      (*slot)["type"] = condition.type;
      (*slot)["status"] = condition.status;
      if (!condition.reason.empty()) (*slot)["reason"] = condition.reason;
      if (!condition.message.empty()) (*slot)["message"] = condition.message;
    }
    out["status"]["conditions"] = conditions;
  }
  return out;
}

json ToJson(const Node& node) {
  json out = WithMeta(node.raw, node.metadata);
  out["apiVersion"] = "v1";
  out["kind"] = "Node";
  out["spec"]["unschedulable"] = node.unschedulable;
  return out;
}

json ToJson(const Lease& lease) {
  json out = WithMeta(lease.raw, lease.metadata);
  out["apiVersion"] = "coordination.k8s.io/v1";
  out["kind"] = "Lease";
  out["spec"]["holderIdentity"] = lease.holder_identity;
  out["spec"]["leaseDurationSeconds"] = lease.lease_duration_seconds;
  if (!lease.acquire_time.empty()) out["spec"]["acquireTime"] = lease.acquire_time;
  if (!lease.renew_time.empty()) out["spec"]["renewTime"] = lease.renew_time;
  out["spec"]["leaseTransitions"] = lease.lease_transitions;
  return out;
}

json ToJson(const Event& event) {
  json out = WithMeta(event.raw, event.metadata);
  out["apiVersion"] = "events.k8s.io/v1";
  out["kind"] = "Event";
  out["type"] = event.type;
  out["reason"] = event.reason;
  out["action"] = event.action;
  out["note"] = event.note;
  out["regarding"] = {{"apiVersion", event.regarding.api_version},
                      {"kind", event.regarding.kind},
                      {"namespace", event.regarding.namespace_name},
                      {"name", event.regarding.name},
                      {"uid", event.regarding.uid}};
  if (event.series_count > 0) out["series"]["count"] = event.series_count;
  return out;
}

}  // namespace modelplane::core
