#include "scheduler-extender/extender_protocol.h"

#include <algorithm>
#include <unordered_set>

namespace modelplane::extender {
namespace {

using nlohmann::json;

core::Error Invalid(std::string message) {
  return core::Error(core::ErrorCode::kInvalidArgument, std::move(message));
}

// A key that is missing and a key that is null mean the same to Go's decoder.
const json* Member(const json& object, std::string_view key) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return nullptr;
  return &*found;
}

std::string StringMember(const json& object, std::string_view key) {
  const json* value = Member(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

core::Result<PodSummary> ReadPod(const json& pod) {
  if (!pod.is_object()) return std::unexpected(Invalid("Pod must be an object"));
  PodSummary summary;
  const json* metadata = Member(pod, "metadata");
  if (metadata == nullptr || !metadata->is_object()) {
    return std::unexpected(Invalid("Pod.metadata must be an object"));
  }
  summary.namespace_name = StringMember(*metadata, "namespace");
  summary.name = StringMember(*metadata, "name");
  summary.uid = StringMember(*metadata, "uid");
  if (summary.name.empty()) return std::unexpected(Invalid("Pod.metadata.name is missing"));
  if (const json* annotations = Member(*metadata, "annotations");
      annotations != nullptr && annotations->is_object()) {
    for (const auto& [key, value] : annotations->items()) {
      if (value.is_string()) summary.annotations.emplace(key, value.get<std::string>());
    }
  }
  return summary;
}

core::Result<std::vector<std::string>> ReadNodeNames(const json& names) {
  if (!names.is_array()) return std::unexpected(Invalid("NodeNames must be an array"));
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const json& name : names) {
    if (!name.is_string() || name.get_ref<const std::string&>().empty()) {
      return std::unexpected(Invalid("NodeNames must hold non-empty strings"));
    }
    out.push_back(name.get<std::string>());
  }
  return out;
}

core::Result<std::vector<std::string>> ReadNodeListNames(const json& list) {
  if (!list.is_object()) return std::unexpected(Invalid("Nodes must be a NodeList object"));
  std::vector<std::string> out;
  // Go encodes an empty slice that was never allocated as null.
  const json* items = Member(list, "items");
  if (items == nullptr) return out;
  if (!items->is_array()) return std::unexpected(Invalid("Nodes.items must be an array"));
  out.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    const json& item = (*items)[i];
    const json* metadata = item.is_object() ? Member(item, "metadata") : nullptr;
    std::string name = metadata != nullptr && metadata->is_object()
                           ? StringMember(*metadata, "name")
                           : std::string();
    if (name.empty()) {
      return std::unexpected(
          Invalid("Nodes.items[" + std::to_string(i) + "] has no metadata.name"));
    }
    out.push_back(std::move(name));
  }
  return out;
}

json FailedMap(const std::map<std::string, std::string>& failed) {
  json out = json::object();
  for (const auto& [node, reason] : failed) out[node] = reason;
  return out;
}

}  // namespace

core::Result<ExtenderArgs> ParseExtenderArgs(std::string_view body,
                                             const core::api::JsonLimits& limits) {
  auto document = core::api::ParseJsonDocument(body, limits);
  if (!document) return std::unexpected(document.error().Wrap("ExtenderArgs"));
  if (!document->is_object()) return std::unexpected(Invalid("ExtenderArgs must be an object"));

  ExtenderArgs args;
  const json* pod = Member(*document, "Pod");
  if (pod == nullptr) return std::unexpected(Invalid("ExtenderArgs.Pod is missing"));
  auto summary = ReadPod(*pod);
  if (!summary) return std::unexpected(summary.error());
  args.pod = std::move(*summary);

  const json* names = Member(*document, "NodeNames");
  json* list = nullptr;
  if (auto found = document->find("Nodes"); found != document->end() && !found->is_null()) {
    list = &*found;
  }
  if (names != nullptr && list != nullptr) {
    return std::unexpected(Invalid("ExtenderArgs has both Nodes and NodeNames"));
  }
  if (names != nullptr) {
    auto read = ReadNodeNames(*names);
    if (!read) return std::unexpected(read.error());
    args.form = NodeForm::kNodeNames;
    args.node_names = std::move(*read);
  } else if (list != nullptr) {
    auto read = ReadNodeListNames(*list);
    if (!read) return std::unexpected(read.error());
    args.form = NodeForm::kNodeList;
    args.node_names = std::move(*read);
    args.node_list = std::move(*list);
  } else {
    return std::unexpected(Invalid("ExtenderArgs has neither Nodes nor NodeNames"));
  }
  return args;
}

json FilterResultToJson(const ExtenderArgs& args, const FilterResult& result) {
  json out = json::object();
  if (args.form == NodeForm::kNodeNames) {
    out["Nodes"] = nullptr;
    out["NodeNames"] = result.passed;
  } else {
    // The passed nodes' objects as sent, in the order sent; the rest of the list (apiVersion,
    // kind, metadata) is kept.
    const std::unordered_set<std::string> passed(result.passed.begin(), result.passed.end());
    json list = json::object();
    for (const auto& [key, value] : args.node_list.items()) {
      if (key != "items") list[key] = value;
    }
    json items = json::array();
    if (const json* sent = Member(args.node_list, "items")) {
      for (std::size_t i = 0; i < sent->size() && i < args.node_names.size(); ++i) {
        if (passed.contains(args.node_names[i])) items.push_back((*sent)[i]);
      }
    }
    list["items"] = std::move(items);
    out["Nodes"] = std::move(list);
    out["NodeNames"] = nullptr;
  }
  out["FailedNodes"] = FailedMap(result.failed);
  out["FailedAndUnresolvableNodes"] = FailedMap(result.unresolvable);
  out["Error"] = result.error;
  return out;
}

json HostPriorityListToJson(const std::vector<HostPriority>& priorities) {
  json out = json::array();
  for (const HostPriority& priority : priorities) {
    out.push_back(
        {{"Host", priority.host},
         {"Score", std::clamp(priority.score, kMinExtenderPriority, kMaxExtenderPriority)}});
  }
  return out;
}

}  // namespace modelplane::extender
