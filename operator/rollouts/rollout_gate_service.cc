#include "operator/rollouts/rollout_gate_service.h"

#include <charconv>

#include "core/api/object_key.h"
#include "core/api/serving_pod.h"
#include "core/json/json_document.h"
#include "core/json/json_lookup.h"

namespace modelplane::controller {
namespace {

namespace http = boost::beast::http;
using nlohmann::json;

// A webhook body is a few hundred bytes; metadata is the user's, so bound it.
constexpr std::size_t kMaxBodyBytes = 64 * 1024;

// "a=b,c=d" from a Deployment's spec.selector.matchLabels.
std::string LabelSelector(const json& deployment) {
  std::string selector;
  const json* found = core::FindMember(deployment, {"spec", "selector", "matchLabels"});
  const json labels = found != nullptr && found->is_object() ? *found : json::object();
  for (const auto& [key, value] : labels.items()) {
    if (!value.is_string()) continue;
    if (!selector.empty()) selector += ",";
    selector += key + "=" + value.get<std::string>();
  }
  return selector;
}

}  // namespace

core::Result<std::unique_ptr<RolloutGateService>> RolloutGateService::Create(
    core::KubeClient& client, core::Logger logger, core::MetricsRegistry& metrics) {
  auto answers = metrics.AddCounter(
      {.name = "modelplane_rollout_gate_answers_total",
       .help = "Answers to progressive-delivery webhooks by hook and answer (go, hold, error).",
       .label_names = {"hook", "answer"}});
  if (!answers) return std::unexpected(answers.error());
  return std::unique_ptr<RolloutGateService>(
      new RolloutGateService(client, std::move(logger), *answers));
}

void RolloutGateService::AddRoutes(core::Router& router) const {
  router.HandlePrefix(http::verb::post, std::string(kRolloutGatePathPrefix),
                      [this](const core::ServerRequest& request) { return Handle(request); });
}

core::Result<GateFacts> RolloutGateService::Gather(const std::string& namespace_name,
                                                   const std::string& target,
                                                   RolloutHook hook) const {
  GateFacts facts{.namespace_name = namespace_name, .target = target};
  auto deployment =
      core::GetOrNull(client_, core::resources::Deployments(), namespace_name, target);
  if (!deployment) return std::unexpected(deployment.error());
  facts.deployment = std::move(*deployment);
  const std::string revision = TargetRevision(facts);
  if (revision.empty()) return facts;
  auto found =
      core::GetOrNull(client_, core::resources::ModelRevisions(), namespace_name, revision);
  if (!found) return std::unexpected(found.error());
  facts.revision = std::move(*found);
  if (hook == RolloutHook::kConfirmPromotion) {
    auto primary = core::GetOrNull(client_, core::resources::Deployments(), namespace_name,
                                   target + "-primary");
    if (!primary) return std::unexpected(primary.error());
    facts.primary = std::move(*primary);
  }
  if (hook == RolloutHook::kConfirmTrafficIncrease) {
    auto pods = client_.ListAll(core::resources::Pods(), namespace_name,
                                {.label_selector = LabelSelector(facts.deployment)});
    if (!pods) return std::unexpected(pods.error());
    for (json& pod : pods->items) facts.pods.push_back(std::move(pod));
  }
  return facts;
}

core::ServerResponse RolloutGateService::Handle(const core::ServerRequest& request) const {
  const std::string_view name =
      std::string_view(request.path).substr(kRolloutGatePathPrefix.size());
  const auto hook = RolloutHookFromPath(name);
  auto count = [&](std::string_view answer) {
    if (auto counter = answers_->WithLabels({hook ? RolloutHookName(*hook) : "unknown", answer})) {
      counter->Increment();
    }
  };
  if (!hook) {
    count("error");
    return core::ServerResponse::Text(http::status::not_found,
                                      "unknown hook; use confirm-rollout, confirm-promotion or "
                                      "confirm-traffic-increase\n");
  }
  auto body = core::ParseJsonDocument(request.body, {.max_bytes = kMaxBodyBytes});
  const auto bad = [&](const std::string& why) {
    count("error");
    return core::ServerResponse::Text(http::status::bad_request, why + "\n");
  };
  if (!body) return bad(body.error().message());
  if (!body->is_object()) return bad("the body must be a JSON object");
  const std::string namespace_name = body->value("namespace", "");
  std::string target = body->value("name", "");
  std::optional<int> nodes;
  if (const auto metadata = body->find("metadata");
      metadata != body->end() && metadata->is_object()) {
    if (const auto deployment = metadata->find("deployment");
        deployment != metadata->end() && deployment->is_string()) {
      target = deployment->get<std::string>();
    }
    // Flagger sends metadata values as strings.
    if (const auto count_field = metadata->find("nodes"); count_field != metadata->end()) {
      const std::string text =
          count_field->is_string() ? count_field->get<std::string>() : count_field->dump();
      int value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc() || end != text.data() + text.size() || value < 1 || value > 10000) {
        return bad("metadata.nodes must be an integer from 1 to 10000");
      }
      nodes = value;
    }
  }
  if (!core::api::IsObjectName(namespace_name) || !core::api::IsObjectName(target)) {
    return bad("namespace and name (or metadata.deployment) must name a Deployment");
  }
  auto facts = Gather(namespace_name, target, *hook);
  if (!facts) {
    logger_.Warn("rollout_gate_failed", {{"hook", RolloutHookName(*hook)},
                                         {"target", core::api::ObjectKey(namespace_name, target)},
                                         {"error", facts.error().ToString()}});
    count("error");
    return core::ServerResponse::Text(http::status::service_unavailable,
                                      facts.error().message() + "\n");
  }
  facts->nodes_override = nodes;
  const GateAnswer answer = DecideGate(*hook, *facts);
  count(answer.allowed ? "go" : "hold");
  logger_.Info("rollout_gate_answered", {{"hook", RolloutHookName(*hook)},
                                         {"target", core::api::ObjectKey(namespace_name, target)},
                                         {"allowed", answer.allowed},
                                         {"reason", answer.reason}});
  return core::ServerResponse::Text(answer.allowed ? http::status::ok : http::status::forbidden,
                                    answer.reason + "\n");
}

}  // namespace modelplane::controller
