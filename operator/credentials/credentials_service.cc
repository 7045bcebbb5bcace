#include "operator/credentials/credentials_service.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/api/object_key.h"
#include "core/kube/resource_type.h"
#include "core/kube/token_review.h"
#include "core/text/base64.h"

namespace modelplane::controller {
namespace {

namespace http = boost::beast::http;
using nlohmann::json;

core::ResourceType Secrets() {
  return {"", "v1", "secrets", "Secret", true};
}

// A DNS-1123 label (a namespace) or subdomain (a Secret), so the path cannot name anything else.
bool IsObjectName(std::string_view name, std::size_t max_length, bool dots) {
  if (name.empty() || name.size() > max_length) return false;
  const auto alphanumeric = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alphanumeric(name.front()) || !alphanumeric(name.back())) return false;
  return std::ranges::all_of(
      name, [&](char c) { return alphanumeric(c) || c == '-' || (dots && c == '.'); });
}

// The first of `keys` present in the Secret's data, decoded; "" when none is.
core::Result<std::string> SecretKey(const json& secret, std::initializer_list<const char*> keys) {
  const auto data = secret.find("data");
  if (data == secret.end() || !data->is_object()) return std::string();
  for (const char* key : keys) {
    const auto found = data->find(key);
    if (found == data->end() || !found->is_string()) continue;
    auto decoded = core::DecodeBase64(found->get<std::string>(), key);
    if (!decoded) return std::unexpected(decoded.error());
    while (!decoded->empty() && (decoded->back() == '\n' || decoded->back() == '\r' ||
                                 decoded->back() == ' ' || decoded->back() == '\t')) {
      decoded->pop_back();
    }
    return *decoded;
  }
  return std::string();
}

}  // namespace

core::Result<std::unique_ptr<CredentialsService>> CredentialsService::Create(
    core::KubeClient& client, CredentialsServiceOptions options, core::Logger logger,
    core::MetricsRegistry& metrics) {
  auto answers = metrics.AddCounter(
      {.name = "modelplane_operator_credential_requests_total",
       .help = "Node agents' requests for object-store credentials by answer (served, "
               "unauthenticated, refused, not_found, unavailable, busy, client_busy).",
       .label_names = {"answer"}});
  if (!answers) return std::unexpected(answers.error());
  return std::unique_ptr<CredentialsService>(
      new CredentialsService(client, std::move(options), std::move(logger), *answers));
}

void CredentialsService::AddRoutes(core::Router& router) const {
  router.HandlePrefix(http::verb::get, std::string(kCredentialsPathPrefix),
                      [this](const core::ServerRequest& request) { return Handle(request); });
}

core::ServerResponse CredentialsService::Handle(const core::ServerRequest& request) const {
  const std::string_view rest =
      std::string_view(request.path).substr(kCredentialsPathPrefix.size());
  const std::size_t slash = rest.find('/');
  const std::string secret_namespace(rest.substr(0, slash));
  const std::string secret_name(slash == std::string_view::npos ? "" : rest.substr(slash + 1));
  std::string node = "-";
  const auto answer = [&](http::status status, std::string_view label, const std::string& why) {
    if (auto counter = answers_->WithLabels({std::string(label)})) counter->Increment();
    logger_.Warn("credentials_refused", {{"node", node},
                                         {"namespace", secret_namespace},
                                         {"secret", secret_name},
                                         {"status", static_cast<std::int64_t>(status)},
                                         {"reason", why}});
    return core::ServerResponse::Text(status, why + "\n");
  };
  // Held for the whole call; past a bound, answered without a TokenReview.
  const ClientAdmission::Ticket ticket = admission_.Enter(request.remote_endpoint);
  if (ticket.verdict() != ClientAdmission::Verdict::kAdmitted) {
    const bool client = ticket.verdict() == ClientAdmission::Verdict::kClientBusy;
    if (auto counter = answers_->WithLabels({client ? "client_busy" : "busy"})) {
      counter->Increment();
    }
    core::ServerResponse busy = core::ServerResponse::Text(
        http::status::service_unavailable,
        client ? "busy with this client's other requests; retry\n" : "busy; retry\n");
    busy.headers.set(http::field::retry_after, "1");
    return busy;
  }
  if (!IsObjectName(secret_namespace, 63, false) || !IsObjectName(secret_name, 253, true)) {
    return answer(http::status::not_found, "not_found", "use /credentials/v1/<namespace>/<secret>");
  }
  const auto header = request.headers.find(http::field::authorization);
  const std::string_view authorization =
      header == request.headers.end()
          ? std::string_view()
          : std::string_view(header->value().data(), header->value().size());
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer) || authorization.size() == kBearer.size()) {
    return answer(http::status::unauthorized, "unauthenticated", "a bearer token is required");
  }
  const std::string_view token = authorization.substr(kBearer.size());
  auto review = core::ReviewToken(client_, token, {options_.audience});
  if (!review) {
    return answer(http::status::service_unavailable, "unavailable", review.error().ToString());
  }
  auto identity = AgentIdentityOf(*review, options_.agent, options_.audience);
  if (!identity) {
    const bool unauthenticated = identity.error().code() == core::ErrorCode::kUnauthenticated;
    return answer(unauthenticated ? http::status::unauthorized : http::status::forbidden,
                  unauthenticated ? "unauthenticated" : "refused", identity.error().message());
  }
  node = identity->node;
  const auto unavailable = [&](const core::Error& error) {
    return answer(http::status::service_unavailable, "unavailable", error.ToString());
  };
  // The token is trusted no longer than its pod lives: read the pod now, not from a cache.
  auto pod = core::GetOrNull(client_, core::resources::Pods(), options_.agent.namespace_name,
                             identity->pod_name);
  if (!pod) return unavailable(pod.error());
  if (auto live = AgentPodIsLive(*identity, *pod); !live) {
    return answer(http::status::unauthorized, "unauthenticated", live.error().message());
  }
  auto cache_object = core::GetOrNull(client_, core::resources::ModelCaches(), "", node);
  if (!cache_object) return unavailable(cache_object.error());
  if (cache_object->is_null()) {
    return answer(http::status::forbidden, "refused",
                  fmt::format("node {} has no ModelCache, so no revision to stage", node));
  }
  auto cache = core::api::ModelCacheFromJson(*cache_object);
  if (!cache) return unavailable(cache.error());
  std::vector<core::api::ModelRevision> revisions;
  for (const core::api::DesiredRevision& entry : cache->spec.revisions) {
    auto object = core::GetOrNull(client_, core::resources::ModelRevisions(),
                                  entry.revision.namespace_name, entry.revision.name);
    if (!object) return unavailable(object.error());
    if (object->is_null()) continue;
    auto revision = core::api::ModelRevisionFromJson(*object);
    if (revision) revisions.push_back(std::move(*revision));  // an unparsable one grants nothing
  }
  auto decision = AuthorizeCredentialRequest(options_.policy, cache->spec, revisions,
                                             secret_namespace, secret_name);
  if (!decision) return answer(http::status::forbidden, "refused", decision.error().message());
  auto secret = core::GetOrNull(client_, Secrets(), secret_namespace, secret_name);
  if (!secret && secret.error().code() == core::ErrorCode::kPermissionDenied) {
    return answer(http::status::forbidden, "refused",
                  fmt::format("the operator may not read Secrets in namespace {} "
                              "(operator.credentials.secretNamespaces)",
                              secret_namespace));
  }
  if (!secret) return unavailable(secret.error());
  if (secret->is_null()) {
    return answer(http::status::not_found, "not_found",
                  fmt::format("Secret {}/{} does not exist", secret_namespace, secret_name));
  }
  auto access_key = SecretKey(*secret, {"accessKeyId", "AWS_ACCESS_KEY_ID"});
  auto secret_key = SecretKey(*secret, {"secretAccessKey", "AWS_SECRET_ACCESS_KEY"});
  auto session_token = SecretKey(*secret, {"sessionToken", "AWS_SESSION_TOKEN"});
  // A hub source's token (huggingFace, modelScope), under the names their clients read.
  auto hub_token = SecretKey(*secret, {"token", "HF_TOKEN", "MODELSCOPE_API_TOKEN"});
  const bool has_keys =
      access_key && secret_key && session_token && !access_key->empty() && !secret_key->empty();
  const bool has_token = hub_token && !hub_token->empty();
  if (!has_keys && !has_token) {
    return answer(http::status::not_found, "not_found",
                  fmt::format("Secret {}/{} has neither accessKeyId and secretAccessKey nor token",
                              secret_namespace, secret_name));
  }
  json body = json::object();
  if (has_keys) {
    body["accessKeyId"] = *access_key;
    body["secretAccessKey"] = *secret_key;
    if (!session_token->empty()) body["sessionToken"] = *session_token;
  }
  if (has_token) body["token"] = *hub_token;
  if (auto counter = answers_->WithLabels({"served"})) counter->Increment();
  logger_.Info("credentials_served",
               {{"node", node},
                {"namespace", secret_namespace},
                {"secret", secret_name},
                {"revision", core::api::ObjectKey(decision->namespace_name, decision->name)}});
  core::ServerResponse response =
      core::ServerResponse::Text(http::status::ok, body.dump(), "application/json");
  response.headers.set(http::field::cache_control, "no-store");
  return response;
}

}  // namespace modelplane::controller
