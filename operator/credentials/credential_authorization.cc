#include "operator/credentials/credential_authorization.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/api/hub_source.h"
#include "core/json/json_lookup.h"

namespace modelplane::controller {

using core::ErrorCode;
using core::MakeError;

namespace {

// The one value of a pod-bound token's extra field, or empty.
std::string SingleExtra(const core::TokenReviewResult& review, std::string_view key) {
  const auto found = review.extra.find(std::string(key));
  if (found == review.extra.end() || found->second.size() != 1) return {};
  return found->second.front();
}

}  // namespace

core::Result<AgentIdentity> AgentIdentityOf(const core::TokenReviewResult& review,
                                            const AgentAccount& account,
                                            std::string_view audience) {
  if (!review.authenticated) {
    return MakeError(ErrorCode::kUnauthenticated,
                     review.error.empty() ? std::string("the token is not valid for this audience")
                                          : "the token is not valid: " + review.error);
  }
  if (std::ranges::find(review.audiences, audience) == review.audiences.end()) {
    return MakeError(
        ErrorCode::kUnauthenticated,
        fmt::format("the review did not confirm the token is for audience {}", audience));
  }
  const std::string expected =
      fmt::format("system:serviceaccount:{}:{}", account.namespace_name, account.name);
  if (review.username != expected) {
    return MakeError(ErrorCode::kPermissionDenied,
                     fmt::format("{} is not the node agent's ServiceAccount", review.username));
  }
  AgentIdentity identity{.node = SingleExtra(review, core::kTokenNodeNameExtra),
                         .pod_name = SingleExtra(review, core::kTokenPodNameExtra),
                         .pod_uid = SingleExtra(review, core::kTokenPodUidExtra)};
  if (identity.node.empty() || identity.pod_name.empty() || identity.pod_uid.empty()) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        "the token is not bound to a pod on a node (no "
        "authentication.kubernetes.io/node-name, pod-name and pod-uid); use the agent pod's "
        "projected token");
  }
  return identity;
}

core::Status AgentPodIsLive(const AgentIdentity& identity, const nlohmann::json& pod) {
  const auto refuse = [&](std::string_view why) {
    return MakeError(ErrorCode::kUnauthenticated,
                     fmt::format("the token's pod {} {}", identity.pod_name, why));
  };
  if (pod.is_null()) return refuse("no longer exists");
  if (core::StringMember(pod, {"metadata", "uid"}) != identity.pod_uid) {
    return refuse("was replaced by another pod of that name");
  }
  if (core::FindMember(pod, {"metadata", "deletionTimestamp"}) != nullptr) {
    return refuse("is being deleted");
  }
  if (core::StringMember(pod, {"spec", "nodeName"}) != identity.node) {
    return refuse("is not on the token's node");
  }
  return core::Ok();
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
      const bool takes_secret =
          source.object_store.has_value() || core::api::HubLocationOf(source) != nullptr;
      if (!takes_secret || !source.credentials_secret_ref ||
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
