// The operator's source credentials endpoint for node agents, served with the webhook's
// TLS certificate, on a listener of its own (credentials.port, which a NetworkPolicy opens to
// the agents only) or on the webhook's: GET /credentials/v1/<namespace>/<secret> with
// "Authorization: Bearer <token>", the agent pod's projected ServiceAccount token for `audience`.
//
// Each request: a TokenReview (the API server checks the token and its audience; the review
// must confirm the audience), then a GET of the pod the token is bound to (the API server
// accepts a deleted pod's token for a while, so the pod must exist now with the token's uid, on
// the token's node, not being deleted), then the decisions of credential_authorization.h on the
// node's
// ModelCache and the revisions it names, read from the API server on the call (not from an
// informer, so a node never gets a Secret on a stale view and every replica can answer), then
// the Secret itself. Answers: 200 {[accessKeyId, secretAccessKey[, sessionToken]], [token]}
// (object-store keys, a hub token from key token, HF_TOKEN or MODELSCOPE_API_TOKEN) with
// Cache-Control: no-store; 401 for a token the API server does not accept; 403 with the reason
// for another account, a token bound to no node, or a Secret the node may not have; 404 for a
// missing Secret or key; 503 when the API server could not be asked (the agent retries). The
// log names node, namespace, Secret and revision, never a key or a token.
// On the webhook's listener the handler shares its threads and holds one for a TokenReview and
// a few GETs, so at most max_in_flight requests are answered at once, and at most
// max_in_flight_per_client from one address (client_admission.h); the others get 503 with
// Retry-After at once, before any TokenReview: a node that floods the endpoint, or a pod sending
// bad tokens, cannot hold every thread admission needs nor crowd out the other agents.
// Thread safety: Handle may run on any number of server threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "core/error/error.h"
#include "core/http/router.h"
#include "core/kube/kube_client.h"
#include "core/log/logger.h"
#include "core/metrics/metrics_registry.h"
#include "core/policy/source_policy.h"
#include "operator/credentials/client_admission.h"
#include "operator/credentials/credential_authorization.h"

namespace modelplane::controller {

inline constexpr std::string_view kCredentialsPathPrefix = "/credentials/v1/";
// Requests are GETs: a body is never needed, so a small bound on its own listener.
inline constexpr std::size_t kMaxCredentialsRequestBytes = 4 * 1024;

struct CredentialsServiceOptions {
  std::string audience;
  AgentAccount agent;
  const core::SourcePolicy* policy = nullptr;  // null: nothing is granted
  int max_in_flight = 1;                       // below the webhook server's threads
  int max_in_flight_per_client = 1;            // per client address
};

class CredentialsService {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<CredentialsService>> Create(
      core::KubeClient& client, CredentialsServiceOptions options, core::Logger logger,
      core::MetricsRegistry& metrics);

  void AddRoutes(core::Router& router) const;
  [[nodiscard]] core::ServerResponse Handle(const core::ServerRequest& request) const;

 private:
  CredentialsService(core::KubeClient& client, CredentialsServiceOptions options,
                     core::Logger logger, core::CounterFamily* answers)
      : client_(client),
        options_(std::move(options)),
        logger_(std::move(logger)),
        answers_(answers),
        admission_(options_.max_in_flight, options_.max_in_flight_per_client) {}

  core::KubeClient& client_;
  const CredentialsServiceOptions options_;
  const core::Logger logger_;
  core::CounterFamily* answers_;
  mutable ClientAdmission admission_;
};

}  // namespace modelplane::controller
