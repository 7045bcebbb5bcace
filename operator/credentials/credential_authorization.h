// Who may have which source credential Secret (object-store keys, a hub token): the decisions
// behind the operator's credentials endpoint (credentials_service.h), apart from its I/O so they
// are tested alone.
//
// The caller is a node agent: its token must be the agent ServiceAccount's, and bound to a pod
// (the API server then names the pod's node in the token's extra
// authentication.kubernetes.io/node-name); a token without a node is refused, since it would let
// the holder speak for any node. Node N may have Secret X/Y only while N's ModelCache spec names
// a revision with an objectStore, huggingFace or modelScope source whose credentialsSecretRef
// resolves to X/Y and the source policy allows that revision's namespace to use it
// (core::AuthorizeSources: its own namespace's Secret, or one a credentials rule grants). Nothing
// else (the revision's author, a pod's annotation, the Secret's labels) widens it. Thread safety:
// pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/error/error.h"
#include "core/kube/token_review.h"
#include "core/policy/source_policy.h"

namespace modelplane::controller {

struct AgentAccount {
  std::string namespace_name;
  std::string name;
};

// Who a reviewed token speaks for: the agent pod it is bound to and that pod's node.
struct AgentIdentity {
  std::string node;
  std::string pod_name;  // in the agent account's namespace
  std::string pod_uid;
};

// kUnauthenticated when the review did not authenticate the token or did not confirm
// `audience` (the review's status.audiences); kPermissionDenied when it is not the agent
// account's or is not bound to one pod on one node. The caller must still check that the pod
// exists now (AgentPodIsLive): the API server keeps accepting a deleted pod's token for a
// while, and its answer may come from a cache.
[[nodiscard]] core::Result<AgentIdentity> AgentIdentityOf(const core::TokenReviewResult& review,
                                                          const AgentAccount& account,
                                                          std::string_view audience);

// Ok when `pod` (read from the API server on the call; null when it does not exist) is the
// identity's pod: the same uid, on the same node, not being deleted. kUnauthenticated otherwise,
// saying which.
[[nodiscard]] core::Status AgentPodIsLive(const AgentIdentity& identity, const nlohmann::json& pod);

// The revision (of those `node_cache` names, given in `revisions`) that lets the node have
// Secret `secret_namespace`/`secret_name`; kPermissionDenied saying why not. `revisions` may
// hold others: only those the cache's spec names count.
[[nodiscard]] core::Result<core::api::RevisionReference> AuthorizeCredentialRequest(
    const core::SourcePolicy* policy, const core::api::ModelCacheSpec& node_cache,
    std::span<const core::api::ModelRevision> revisions, std::string_view secret_namespace,
    std::string_view secret_name);

}  // namespace modelplane::controller
