#include "operator/credentials/credential_authorization.h"

#include <algorithm>

#include <fmt/format.h>

namespace modelplane::controller {

using core::ErrorCode;
using core::MakeError;

core::Result<std::string> AgentNodeOf(const core::TokenReviewResult& review,
                                      const AgentAccount& account) {
  if (!review.authenticated) {
    return MakeError(ErrorCode::kUnauthenticated,
                     review.error.empty() ? std::string("the token is not valid for this audience")
                                          : "the token is not valid: " + review.error);
  }
  const std::string expected =
      fmt::format("system:serviceaccount:{}:{}", account.namespace_name, account.name);
  if (review.username != expected) {
    return MakeError(ErrorCode::kPermissionDenied,
                     fmt::format("{} is not the node agent's ServiceAccount", review.username));
  }
  const auto node = review.extra.find(std::string(core::kTokenNodeNameExtra));
  if (node == review.extra.end() || node->second.size() != 1 || node->second.front().empty()) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        "the token is not bound to a pod on a node (no "
        "authentication.kubernetes.io/node-name); use the agent pod's projected token");
  }
  return node->second.front();
}

core::Result<core::api::RevisionReference> AuthorizeCredentialRequest(
    const core::SourcePolicy* policy, const core::api::ModelCacheSpec& node_cache,
    std::span<const core::api::ModelRevision> revisions, std::string_view secret_namespace,
    std::string_view secret_name) {
  for (const core::api::DesiredRevision& entry : node_cache.revisions) {
    const auto revision = std::ranges::find_if(revisions, [&](const core::api::ModelRevision& r) {
      return r.metadata.namespace_name == entry.revision.namespace_name &&
             r.metadata.name == entry.revision.name;
    });
    if (revision == revisions.end()) continue;
    for (const core::api::ModelSource& source : revision->spec.sources) {
      if (!source.object_store || !source.credentials_secret_ref ||
          source.credentials_secret_ref->name != secret_name) {
        continue;
      }
      // The policy decides which namespace the reference resolves to, and whether it may.
      auto grants = core::AuthorizeSources(policy, revision->metadata.namespace_name, {source});
      if (grants && grants->size() == 1 && grants->front().secret_namespace == secret_namespace) {
        return entry.revision;
      }
    }
  }
  return MakeError(ErrorCode::kPermissionDenied,
                   fmt::format("no revision this node's ModelCache names may use Secret {}/{} "
                               "(credentialsSecretRef and the source policy)",
                               secret_namespace, secret_name));
}

}  // namespace modelplane::controller
