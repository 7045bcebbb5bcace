// What the CSI plugin asks before it mounts a revision: does the ModelRevision exist, what is its
// digest, is it revoked, and is it Ready in this node's store. The node agent's control loop
// (NodeController) answers from its informers and the store; tests answer from a table.
//
// Thread safety: implementations are called from gRPC threads, several at once.
#pragma once

#include <string>
#include <string_view>

#include "core/digest/sha256.h"

namespace modelplane::agent {

struct RevisionStatus {
  bool known = false;   // the ModelRevision exists and is valid
  std::string problem;  // when not known: "not found", or why it is invalid
  core::Sha256Bytes digest{};
  bool revoked = false;  // spec.revoked
  // Its manifest is in this node's store (every blob verified), and its own sources were shown
  // to serve those bytes (docs/security.md, "Bytes shared across namespaces").
  bool ready_here = false;
};

class RevisionResolver {
 public:
  virtual ~RevisionResolver() = default;
  // The ModelRevision `name` in `namespace_name`.
  [[nodiscard]] virtual RevisionStatus ResolveRevision(std::string_view namespace_name,
                                                       std::string_view name) const = 0;
  // False until the resolver has seen the cluster's state (its informers synced): until then
  // "not found" could be wrong, and the plugin's Probe says it is not ready.
  [[nodiscard]] virtual bool RevisionsSynced() const = 0;
};

}  // namespace modelplane::agent
