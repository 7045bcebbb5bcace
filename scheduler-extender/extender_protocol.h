// kube-scheduler's HTTP extender protocol (k8s.io/kube-scheduler/extender/v1) as JSON.
//
// The Go types have no json tags, so the keys are the Go field names: kube-scheduler POSTs
// ExtenderArgs {Pod, Nodes, NodeNames} to <urlPrefix>/<filterVerb> and /<prioritizeVerb>.
// With nodeCacheCapable: true it sends NodeNames (a list of names) and Nodes: null, and reads
// NodeNames back from the filter result; otherwise it sends Nodes (a whole v1.NodeList) and
// NodeNames: null, and reads the surviving Node objects back from Nodes. A filter answers
// ExtenderFilterResult {Nodes, NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error}; a
// prioritize answers HostPriorityList [{Host, Score}] with Score in 0..MaxExtenderPriority (10).
// Only the fields modelplane needs are read from the Pod, leniently, so an extender that cannot
// read some pod never blocks its scheduling; extender_request_reader.h reads requests, this file
// holds the types and writes the answers.
// Thread safety: pure functions over values.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/object_key.h"

namespace modelplane::extender {

inline constexpr std::int64_t kMinExtenderPriority = 0;
inline constexpr std::int64_t kMaxExtenderPriority = 10;

// Which form kube-scheduler used, so the answer can use the same one.
enum class NodeForm {
  kNodeNames,  // nodeCacheCapable: true
  kNodeList,   // nodeCacheCapable: false
};

// The parts of the Pod the extender reads.
struct PodSummary {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::map<std::string, std::string> annotations;  // string values only

  [[nodiscard]] std::string Key() const { return core::api::ObjectKey(namespace_name, name); }
};

// nlohmann::json's move operations are noexcept; see AdmissionRequest in
// operator/webhook/admission_review.h.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct ExtenderArgs {
  PodSummary pod;
  NodeForm form = NodeForm::kNodeNames;
  std::vector<std::string> node_names;  // the candidates in the order sent, in both forms
  nlohmann::json node_list;             // kNodeList: the NodeList as sent, answered back filtered
};

// A node the filter turns away, and why.
struct FailedNode {
  std::string_view node;
  std::string_view reason;
};

// The answers view the names and reasons of the decision they are written from, which must
// outlive them: copying the names into the answer first was a quarter of rendering a
// 5,000-candidate one (perf, 2026-12-05).
struct FilterResult {
  std::vector<std::string_view> passed;  // a subset of the candidates, in their order
  // FailedNodes and FailedAndUnresolvableNodes (preemption cannot help), in the candidates'
  // order. A node named twice in a request is answered twice; Go's decoder keeps the last
  // entry for it.
  std::vector<FailedNode> failed;
  std::vector<FailedNode> unresolvable;
  std::string error;  // non-empty fails the scheduling attempt
};

struct HostPriority {
  std::string_view host;
  std::int64_t score = 0;  // kMinExtenderPriority..kMaxExtenderPriority
};

// ExtenderFilterResult as the response body, in the form the request used: NodeNames, or Nodes
// carrying the passed nodes' objects exactly as sent. Every key is present, as Go's encoder
// would write it. Written as text like the priorities below, save the NodeList form's objects.
[[nodiscard]] std::string FilterResultBody(const ExtenderArgs& args, const FilterResult& result);

// HostPriorityList as the response body; scores are clamped to 0..10. Written as text, not built
// as a document: one object per candidate made this the largest part of a 5,000-node answer.
[[nodiscard]] std::string HostPriorityListBody(std::span<const HostPriority> priorities);

}  // namespace modelplane::extender
