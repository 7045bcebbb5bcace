// Reads kube-scheduler's ExtenderArgs body, keeping only what the extender uses.
//
// A request is untrusted input sized by the cluster (every candidate node, the whole Pod).
// simdjson validates the whole body in one pass (UTF-8, numbers, structure, nesting) into its
// compact tape, never into a document of nlohmann values; the reader then walks only what it
// uses: the Pod's namespace, name, uid and string annotations, the candidates' names, and in
// node-list form the Node objects it must send back. The rest of the Pod is never looked at.
// Bounds: the body size (before parsing), nesting (while parsing), the number of nodes, the
// length of a node name and the number of annotations (while walking, stopping at the first
// value past one). Duplicate keys are refused wherever a value is kept, because Go's decoder
// takes the last and a reader that took the first could disagree with kube-scheduler. Errors
// (kInvalidArgument; kResourceExhausted when memory runs out) name the JSON path, and a syntax
// error its line and column.
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/api/limits.h"
#include "core/error/error.h"
#include "scheduler-extender/extender_protocol.h"

namespace modelplane::extender {

struct ExtenderRequestLimits {
  // A names-only request for 5000 nodes is about 100 KB; see docs/scheduler-extender.md for
  // node-list requests, which carry every candidate Node object.
  std::size_t max_bytes = 1024 * 1024;
  // A Pod's affinity terms nest about 10 deep and a Node's status less; 64 leaves room.
  int max_depth = 64;
  // Kubernetes' documented scalability limit is 5000 nodes per cluster.
  std::size_t max_nodes = 5000;
  // A node name is a DNS subdomain.
  std::size_t max_node_name_bytes = 253;
  // The bound modelplane applies to every object's annotations (core/api/limits.h).
  std::size_t max_annotations = core::api::kMaxMapEntries;
};

// Fails (kInvalidArgument) on JSON that is not ExtenderArgs: no Pod object or Pod.metadata,
// no Pod name, neither or both of Nodes and NodeNames, a node without a name, or a bound
// exceeded.
[[nodiscard]] core::Result<ExtenderArgs> ParseExtenderArgs(std::string_view body,
                                                           const ExtenderRequestLimits& limits);

}  // namespace modelplane::extender
