#include "operator/gating/scheduling_facts.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "core/api/quantity.h"
#include "core/api/timestamp.h"
#include "core/json/json_lookup.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

const json& ArrayOrEmpty(const json* value) {
  static const json kEmpty = json::array();
  return value != nullptr && value->is_array() ? *value : kEmpty;
}

// Unreadable quantities count as nothing requested and nothing offered: the API server has
// validated both, so this only happens with a hand-made object, and kube-scheduler decides.
ResourceList Resources(const json* list) {
  ResourceList out;
  if (list == nullptr || !list->is_object()) return out;
  for (const auto& [name, value] : list->items()) {
    if (!value.is_string() && !value.is_number()) continue;
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    if (auto milli = core::ParseMilliQuantity(text)) out[name] = *milli;
  }
  return out;
}

void Add(ResourceList& into, const ResourceList& more) {
  for (const auto& [name, amount] : more) {
    std::int64_t& total = into[name];
    total = amount > core::kMaxMilliQuantity - total ? core::kMaxMilliQuantity : total + amount;
  }
}

void Max(ResourceList& into, const ResourceList& other) {
  for (const auto& [name, amount] : other) into[name] = std::max(into[name], amount);
}

// A container's requests, with limits standing in for requests it leaves out (as the API
// server defaults them).
ResourceList ContainerRequests(const json& container) {
  ResourceList requests = Resources(core::FindMember(container, {"resources", "requests"}));
  for (const auto& [name, amount] :
       Resources(core::FindMember(container, {"resources", "limits"}))) {
    requests.emplace(name, amount);
  }
  return requests;
}

// kube-scheduler's pod request: containers plus sidecars, or the largest init step if larger,
// plus the pod overhead.
ResourceList PodRequests(const json& spec) {
  ResourceList containers;
  for (const json& container : ArrayOrEmpty(core::FindMember(spec, {"containers"}))) {
    Add(containers, ContainerRequests(container));
  }
  ResourceList sidecars;
  ResourceList init_peak;
  for (const json& container : ArrayOrEmpty(core::FindMember(spec, {"initContainers"}))) {
    const ResourceList requests = ContainerRequests(container);
    if (core::StringMember(container, {"restartPolicy"}) == "Always") {
      Add(sidecars, requests);
      Max(init_peak, sidecars);
    } else {
      ResourceList step = sidecars;
      Add(step, requests);
      Max(init_peak, step);
    }
  }
  Add(containers, sidecars);
  Max(containers, init_peak);
  Add(containers, Resources(core::FindMember(spec, {"overhead"})));
  containers["pods"] = 1000;
  return containers;
}

std::vector<std::string> Strings(const json* list) {
  std::vector<std::string> out;
  for (const json& value : ArrayOrEmpty(list)) {
    if (value.is_string()) out.push_back(value.get<std::string>());
  }
  return out;
}

std::vector<SelectorRequirement> Requirements(const json* list) {
  std::vector<SelectorRequirement> out;
  for (const json& entry : ArrayOrEmpty(list)) {
    out.push_back({.key = core::StringMember(entry, {"key"}),
                   .op = core::StringMember(entry, {"operator"}),
                   .values = Strings(core::FindMember(entry, {"values"}))});
  }
  return out;
}

LabelSelector ReadLabelSelector(const json* selector) {
  // A null selector selects nothing (metav1 semantics for affinity terms).
  if (selector == nullptr || !selector->is_object()) return {.matches_nothing = true};
  return {.match_labels = core::StringMapMember(*selector, {"matchLabels"}),
          .requirements = Requirements(core::FindMember(*selector, {"matchExpressions"}))};
}

std::vector<HostAntiAffinity> ReadHostAntiAffinity(
    const json& spec, const std::map<std::string, std::string>& labels) {
  std::vector<HostAntiAffinity> out;
  for (const json& term :
       ArrayOrEmpty(core::FindMember(spec, {"affinity", "podAntiAffinity",
                                            "requiredDuringSchedulingIgnoredDuringExecution"}))) {
    if (core::StringMember(term, {"topologyKey"}) != kHostnameLabel) continue;
    HostAntiAffinity rule{.selector = ReadLabelSelector(core::FindMember(term, {"labelSelector"})),
                          .namespaces = Strings(core::FindMember(term, {"namespaces"}))};
    if (const json* namespaces = core::FindMember(term, {"namespaceSelector"})) {
      // Only "every namespace" can be decided without namespace labels; other selectors are
      // left to kube-scheduler.
      if (!namespaces->is_object() || !namespaces->empty()) continue;
      rule.all_namespaces = true;
    }
    // matchLabelKeys: the term also requires the pod's own value of each key.
    for (const std::string& key : Strings(core::FindMember(term, {"matchLabelKeys"}))) {
      if (auto value = labels.find(key); value != labels.end()) {
        rule.selector.requirements.push_back({.key = key, .op = "In", .values = {value->second}});
      }
    }
    out.push_back(std::move(rule));
  }
  return out;
}

bool Contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

std::optional<std::int64_t> Integer(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// One requirement against a value that may be absent.
bool Holds(const SelectorRequirement& requirement, const std::string* value) {
  const std::string& op = requirement.op;
  if (op == "In") return value != nullptr && Contains(requirement.values, *value);
  if (op == "NotIn") return value == nullptr || !Contains(requirement.values, *value);
  if (op == "Exists") return value != nullptr;
  if (op == "DoesNotExist") return value == nullptr;
  if ((op == "Gt" || op == "Lt") && value != nullptr && requirement.values.size() == 1) {
    const auto have = Integer(*value);
    const auto want = Integer(requirement.values.front());
    if (!have || !want) return false;
    return op == "Gt" ? *have > *want : *have < *want;
  }
  return false;
}

const std::string* Lookup(const std::map<std::string, std::string>& labels,
                          const std::string& key) {
  const auto found = labels.find(key);
  return found == labels.end() ? nullptr : &found->second;
}

bool Tolerates(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (toleration.op == "Exists") return toleration.key.empty() || toleration.key == taint.key;
  return toleration.key == taint.key && toleration.value == taint.value;
}

bool ToleratesAll(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return Tolerates(t, taint); });
}

bool InNamespaces(const HostAntiAffinity& rule, const std::string& owner_namespace,
                  const std::string& other_namespace) {
  if (rule.all_namespaces) return true;
  if (rule.namespaces.empty()) return owner_namespace == other_namespace;
  return Contains(rule.namespaces, other_namespace);
}

bool Repels(const PodFacts& owner, const PodFacts& other) {
  return std::any_of(owner.host_anti_affinity.begin(), owner.host_anti_affinity.end(),
                     [&](const HostAntiAffinity& rule) {
                       return InNamespaces(rule, owner.namespace_name, other.namespace_name) &&
                              Matches(rule.selector, other.labels);
                     });
}

}  // namespace

PodFacts ReadPodFacts(const json& pod) {
  PodFacts facts;
  const json empty = json::object();
  const json* spec_pointer = core::FindMember(pod, {"spec"});
  const json& spec = spec_pointer != nullptr ? *spec_pointer : empty;
  facts.namespace_name = core::StringMember(pod, {"metadata", "namespace"});
  facts.name = core::StringMember(pod, {"metadata", "name"});
  facts.node_name = core::StringMember(spec, {"nodeName"});
  facts.labels = core::StringMapMember(pod, {"metadata", "labels"});
  facts.requests = PodRequests(spec);
  facts.node_selector = core::StringMapMember(spec, {"nodeSelector"});
  for (const json& term : ArrayOrEmpty(core::FindMember(
           spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                  "nodeSelectorTerms"}))) {
    facts.required_terms.push_back(
        {.label_requirements = Requirements(core::FindMember(term, {"matchExpressions"})),
         .field_requirements = Requirements(core::FindMember(term, {"matchFields"}))});
  }
  for (const json& toleration : ArrayOrEmpty(core::FindMember(spec, {"tolerations"}))) {
    facts.tolerations.push_back({.key = core::StringMember(toleration, {"key"}),
                                 .op = core::StringMember(toleration, {"operator"}),
                                 .value = core::StringMember(toleration, {"value"}),
                                 .effect = core::StringMember(toleration, {"effect"})});
  }
  facts.host_anti_affinity = ReadHostAntiAffinity(spec, facts.labels);
  const std::string phase = core::StringMember(pod, {"status", "phase"});
  facts.terminal = phase == "Succeeded" || phase == "Failed";
  if (auto deadline =
          core::api::ParseTimestamp(core::StringMember(pod, {"metadata", "deletionTimestamp"}))) {
    facts.deletion_deadline = *deadline;
  }
  return facts;
}

std::optional<NodeFacts> ReadNodeFacts(const json& node) {
  NodeFacts facts;
  facts.name = core::StringMember(node, {"metadata", "name"});
  if (facts.name.empty()) return std::nullopt;
  facts.labels = core::StringMapMember(node, {"metadata", "labels"});
  facts.allocatable = Resources(core::FindMember(node, {"status", "allocatable"}));
  const json* unschedulable = core::FindMember(node, {"spec", "unschedulable"});
  facts.unschedulable =
      unschedulable != nullptr && unschedulable->is_boolean() && unschedulable->get<bool>();
  for (const json& taint : ArrayOrEmpty(core::FindMember(node, {"spec", "taints"}))) {
    facts.taints.push_back({.key = core::StringMember(taint, {"key"}),
                            .value = core::StringMember(taint, {"value"}),
                            .effect = core::StringMember(taint, {"effect"})});
  }
  for (const json& condition : ArrayOrEmpty(core::FindMember(node, {"status", "conditions"}))) {
    if (core::StringMember(condition, {"type"}) == "Ready") {
      facts.ready = core::StringMember(condition, {"status"}) == "True";
    }
  }
  return facts;
}

bool Matches(const LabelSelector& selector, const std::map<std::string, std::string>& labels) {
  if (selector.matches_nothing) return false;
  for (const auto& [key, value] : selector.match_labels) {
    const std::string* have = Lookup(labels, key);
    if (have == nullptr || *have != value) return false;
  }
  return std::all_of(selector.requirements.begin(), selector.requirements.end(),
                     [&](const SelectorRequirement& requirement) {
                       // Label selectors know no Gt / Lt: such a term selects nothing.
                       if (requirement.op == "Gt" || requirement.op == "Lt") return false;
                       return Holds(requirement, Lookup(labels, requirement.key));
                     });
}

bool Matches(const NodeSelectorTerm& term, const NodeFacts& node) {
  // An empty term selects no node (core/v1 NodeSelectorTerm).
  if (term.label_requirements.empty() && term.field_requirements.empty()) return false;
  for (const SelectorRequirement& requirement : term.label_requirements) {
    if (!Holds(requirement, Lookup(node.labels, requirement.key))) return false;
  }
  for (const SelectorRequirement& requirement : term.field_requirements) {
    if (requirement.key != "metadata.name") return false;
    if (!Holds(requirement, &node.name)) return false;
  }
  return true;
}

std::optional<std::string> StaticMismatch(const PodFacts& pod, const NodeFacts& node) {
  if (!node.ready) return "not Ready";
  if (node.unschedulable &&
      !ToleratesAll(pod.tolerations,
                    {.key = "node.kubernetes.io/unschedulable", .effect = "NoSchedule"})) {
    return "cordoned";
  }
  for (const auto& [key, value] : pod.node_selector) {
    const std::string* have = Lookup(node.labels, key);
    if (have == nullptr || *have != value) {
      return fmt::format("does not match the pod's nodeSelector {}={}", key, value);
    }
  }
  if (!pod.required_terms.empty() &&
      std::none_of(pod.required_terms.begin(), pod.required_terms.end(),
                   [&](const NodeSelectorTerm& term) { return Matches(term, node); })) {
    return "does not match the pod's required node affinity";
  }
  for (const Taint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!ToleratesAll(pod.tolerations, taint)) {
      return fmt::format("has taint {}={}:{} that the pod does not tolerate", taint.key,
                         taint.value, taint.effect);
    }
  }
  return std::nullopt;
}

bool AntiAffinityConflict(const PodFacts& incoming, const PodFacts& resident) {
  return Repels(incoming, resident) || Repels(resident, incoming);
}

}  // namespace modelplane::controller
