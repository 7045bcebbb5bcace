#include "operator/gating/gate_patch.h"

#include <string_view>

#include <fmt/format.h>

#include "core/api/serving_pod.h"
#include "core/json/json_lookup.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

constexpr char kRequiredPath[] =
    "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution";

json NameTerms(const std::vector<NodeFacts>& nodes) {
  json terms = json::array();
  for (const NodeFacts& node : nodes) {
    terms.push_back(
        {{"matchFields",
          json::array({{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node.name}}}})}});
  }
  return terms;
}

// Adds `value` at `path` inside the pod, creating the missing parents of
// spec.affinity.nodeAffinity as whole objects (a JSON patch cannot add below a missing parent).
void AddRequired(const json& pod, json& operations, const json& required) {
  if (core::FindMember(pod, {"spec", "affinity"}) == nullptr) {
    operations.push_back(
        {{"op", "add"},
         {"path", "/spec/affinity"},
         {"value",
          {{"nodeAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", required}}}}}});
  } else if (core::FindMember(pod, {"spec", "affinity", "nodeAffinity"}) == nullptr) {
    operations.push_back(
        {{"op", "add"},
         {"path", "/spec/affinity/nodeAffinity"},
         {"value", {{"requiredDuringSchedulingIgnoredDuringExecution", required}}}});
  } else {
    // Absent, or present with no terms: either way replaced whole ("add" replaces a member).
    operations.push_back({{"op", "add"}, {"path", kRequiredPath}, {"value", required}});
  }
}

// A member name as one JSON Pointer token (RFC 6901): "~" is "~0" and "/" is "~1".
std::string PointerToken(std::string_view name) {
  std::string token;
  for (const char c : name) {
    if (c == '~') {
      token += "~0";
    } else if (c == '/') {
      token += "~1";
    } else {
      token += c;
    }
  }
  return token;
}

}  // namespace

core::Result<json> UngatePatch(const json& pod, const std::vector<NodeFacts>& nodes,
                               const std::map<std::string, std::string>& annotations) {
  const json* gates = core::FindMember(pod, {"spec", "schedulingGates"});
  std::optional<std::size_t> gate_index;
  if (gates != nullptr && gates->is_array()) {
    for (std::size_t i = 0; i < gates->size(); ++i) {
      const json& gate = (*gates)[i];
      if (gate.is_object() && gate.value("name", "") == core::api::kWeightsSchedulingGate) {
        gate_index = i;
        break;
      }
    }
  }
  if (!gate_index) {
    return core::MakeError(
        core::ErrorCode::kInvalidArgument,
        "the pod has no " + std::string(core::api::kWeightsSchedulingGate) + " scheduling gate");
  }
  if (nodes.empty()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument, "no node to narrow the pod to");
  }
  const std::string resource_version =
      core::FindMember(pod, {"metadata", "resourceVersion"}) != nullptr
          ? pod["metadata"].value("resourceVersion", "")
          : std::string();
  json operations = json::array();
  if (!resource_version.empty()) {
    operations.push_back(
        {{"op", "replace"}, {"path", "/metadata/resourceVersion"}, {"value", resource_version}});
  }

  const json* terms = core::FindMember(
      pod, {"spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms"});
  if (terms == nullptr || !terms->is_array() || terms->empty()) {
    AddRequired(pod, operations, {{"nodeSelectorTerms", NameTerms(nodes)}});
  } else {
    std::vector<std::string> hostnames;
    for (const NodeFacts& node : nodes) {
      if (auto label = node.labels.find(std::string(kHostnameLabel)); label != node.labels.end()) {
        hostnames.push_back(label->second);
      }
    }
    if (hostnames.empty()) {
      return core::MakeError(core::ErrorCode::kInvalidArgument,
                             fmt::format("the pod has node affinity terms, and none of {} "
                                         "carries a {} label to narrow them by",
                                         nodes.front().name, kHostnameLabel));
    }
    const json requirement = {{"key", kHostnameLabel}, {"operator", "In"}, {"values", hostnames}};
    for (std::size_t i = 0; i < terms->size(); ++i) {
      const std::string term = fmt::format("{}/nodeSelectorTerms/{}", kRequiredPath, i);
      const json& existing = (*terms)[i];
      if (existing.is_object() && existing.contains("matchExpressions") &&
          existing["matchExpressions"].is_array()) {
        operations.push_back(
            {{"op", "add"}, {"path", term + "/matchExpressions/-"}, {"value", requirement}});
      } else {
        operations.push_back({{"op", "add"},
                              {"path", term + "/matchExpressions"},
                              {"value", json::array({requirement})}});
      }
    }
  }
  // A serving pod always has annotations (its revision's); `pod` may be the informer's trimmed
  // copy, so a missing map is never added whole (that would replace the pod's own).
  const json* present = core::FindMember(pod, {"metadata", "annotations"});
  if (present != nullptr && present->is_object()) {
    for (const auto& [name, value] : annotations) {
      if (value.empty() || core::StringMember(*present, {name}) == value) continue;
      operations.push_back({{"op", "add"},
                            {"path", "/metadata/annotations/" + PointerToken(name)},
                            {"value", value}});
    }
  }
  const std::string gate_path = fmt::format("/spec/schedulingGates/{}", *gate_index);
  operations.push_back({{"op", "test"},
                        {"path", gate_path + "/name"},
                        {"value", core::api::kWeightsSchedulingGate}});
  operations.push_back({{"op", "remove"}, {"path", gate_path}});
  return operations;
}

std::vector<std::string> NodesAdmitted(const PodFacts& pod, const std::vector<NodeFacts>& known) {
  std::vector<std::string> admitted;
  for (const NodeFacts& node : known) {
    if (pod.required_terms.empty()) {
      admitted.push_back(node.name);
      continue;
    }
    for (const NodeSelectorTerm& term : pod.required_terms) {
      if (Matches(term, node)) {
        admitted.push_back(node.name);
        break;
      }
    }
  }
  return admitted;
}

}  // namespace modelplane::controller
