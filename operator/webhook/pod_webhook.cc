#include "operator/webhook/pod_webhook.h"

#include <chrono>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/api/model_revision_validation.h"
#include "core/api/model_revocation.h"
#include "core/api/object_key.h"
#include "core/api/revision_digest.h"
#include "core/metrics/histogram_buckets.h"
#include "core/signing/model_signature_verifier.h"
#include "core/signing/signature_time.h"
#include "operator/webhook/admission_answer.h"

namespace modelplane::controller {
namespace {

namespace http = boost::beast::http;
using nlohmann::json;

}  // namespace

core::Result<std::unique_ptr<PodWebhook>> PodWebhook::Create(
    const core::ObjectStore& revisions, std::optional<core::SourcePolicy> policy,
    InjectionOptions options, core::Logger logger, core::MetricsRegistry& metrics) {
  // 100 us to about 3.3 s: an answer from the informer's store takes well under a millisecond,
  // and the API server gives up at the webhook's timeoutSeconds (10 s at most).
  auto buckets = core::ExponentialBuckets(0.0001, 2, 16);
  if (!buckets) return std::unexpected(buckets.error());
  auto duration =
      metrics.AddHistogram({.name = "modelplane_webhook_request_duration_seconds",
                            .help = "Time to answer one AdmissionReview for a serving pod."},
                           std::move(*buckets));
  if (!duration) return std::unexpected(duration.error());
  auto requests = metrics.AddCounter(
      {.name = "modelplane_webhook_requests_total",
       .help = "AdmissionReviews for serving pods by outcome (injected, unchanged, waiting, "
               "refused, unmanaged, bad_request, not_ready).",
       .label_names = {"outcome"}});
  if (!requests) return std::unexpected(requests.error());
  auto cell = (*duration)->WithLabels({});
  if (!cell) return std::unexpected(cell.error());
  return std::unique_ptr<PodWebhook>(new PodWebhook(
      revisions, std::move(policy), std::move(options), std::move(logger), *requests, *cell));
}

PodWebhook::PodWebhook(const core::ObjectStore& revisions, std::optional<core::SourcePolicy> policy,
                       InjectionOptions options, core::Logger logger, core::CounterFamily* requests,
                       core::Histogram duration)
    : revisions_(revisions),
      policy_(std::move(policy)),
      options_(std::move(options)),
      logger_(std::move(logger)),
      requests_(requests),
      duration_(duration) {}

void PodWebhook::AddRoutes(core::Router& router) const {
  router.Handle(http::verb::post, std::string(kPodWebhookPath),
                [this](const core::ServerRequest& request) { return Handle(request); });
}

void PodWebhook::Count(std::string_view outcome) const {
  // A fixed set of outcomes: WithLabels cannot reach the family's child limit.
  if (auto counter = requests_->WithLabels({outcome})) counter->Increment();
}

RevisionLookup PodWebhook::Lookup(const std::string& namespace_name,
                                  const std::string& name) const {
  const core::ObjectPtr object = revisions_.Get(core::api::ObjectKey(namespace_name, name));
  if (!object) return {};
  auto revision = core::api::ModelRevisionFromJson(*object);
  if (!revision) {
    return {.state = RevisionLookup::State::kInvalid, .problem = revision.error().message()};
  }
  const auto problems = core::api::ValidateModelRevisionSpec(revision->spec);
  if (!problems.empty()) {
    std::string text;
    for (const auto& problem : problems) {
      if (!text.empty()) text += "; ";
      text += fmt::format("{}: {}", problem.path, problem.message);
    }
    return {.state = RevisionLookup::State::kInvalid, .problem = std::move(text)};
  }
  if (core::api::IsRevoked(*revision)) return {.state = RevisionLookup::State::kRevoked};
  if (auto allowed = core::AuthorizeSources(policy_ ? &*policy_ : nullptr, namespace_name,
                                            revision->spec.sources);
      !allowed) {
    return {.state = RevisionLookup::State::kInvalid, .problem = allowed.error().message()};
  }
  if (auto signed_by = core::VerifyModelSignatures(
          policy_ ? &policy_->signatures : nullptr, namespace_name, revision->spec,
          core::SignatureTime(*revision, std::chrono::system_clock::now()));
      !signed_by) {
    return {.state = RevisionLookup::State::kInvalid,
            .problem = fmt::format("{}: {}", signed_by.error().reason, signed_by.error().message)};
  }
  auto digest = core::api::ComputeRevisionDigest(revision->spec);
  if (!digest)
    return {.state = RevisionLookup::State::kInvalid, .problem = digest.error().message()};
  return {.state = RevisionLookup::State::kValid,
          .digest = *digest,
          .base_digest = revision->spec.base ? revision->spec.base->digest : std::string()};
}

core::ServerResponse PodWebhook::Handle(const core::ServerRequest& request) const {
  const auto started = std::chrono::steady_clock::now();
  auto finish = [&](core::ServerResponse response, std::string_view outcome) {
    Count(outcome);
    duration_.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    return response;
  };
  auto review = ParseAdmissionReview(request.body);
  if (!review) {
    logger_.Warn("admission_review_rejected",
                 {{"remote", request.remote_endpoint}, {"error", review.error().message()}});
    return finish(
        core::ServerResponse::Text(http::status::bad_request, review.error().message() + "\n"),
        "bad_request");
  }
  if (!synced_.load()) {
    // An allowed=false answer with the reason reads better in `kubectl describe replicaset`
    // than a connection error, and failurePolicy Fail would refuse the pod either way.
    return finish(AnswerAdmissionReview(review->uid,
                                        {.allowed = false,
                                         .code = 503,
                                         .message = "modelplane webhook: revisions not listed yet; "
                                                    "retry shortly"}),
                  "not_ready");
  }
  if (review->operation != "CREATE" || review->kind != "Pod" || !review->group.empty()) {
    return finish(AnswerAdmissionReview(review->uid, {}), "unmanaged");
  }
  const InjectionResult injected = InjectServingPod(
      review->object, review->namespace_name,
      [this](const std::string& ns, const std::string& name) { return Lookup(ns, name); },
      options_);
  AdmissionVerdict verdict{.allowed = injected.allowed, .warnings = injected.warnings};
  if (!injected.allowed) {
    verdict.code = 403;
    verdict.message = "modelplane: " + injected.message;
  } else if (injected.pod) {
    verdict.patch = json::diff(review->object, *injected.pod);
  }
  std::string pod_name = review->name;
  if (pod_name.empty()) {
    // Pods of a ReplicaSet are named after admission; their generateName says whose they are.
    const json* metadata = review->object.is_object() && review->object.contains("metadata")
                               ? &review->object["metadata"]
                               : nullptr;
    pod_name = (metadata != nullptr && metadata->is_object()
                    ? metadata->value("generateName", std::string())
                    : std::string()) +
               "*";
  }
  // Log fields hold views: the key must outlive the array.
  const std::string pod_key = core::api::ObjectKey(review->namespace_name, pod_name);
  const core::LogField fields[] = {{"pod", pod_key},
                                   {"revision", injected.revision},
                                   {"outcome", injected.outcome},
                                   {"dry_run", review->dry_run},
                                   {"reason", injected.message}};
  logger_.Log(injected.allowed ? core::LogLevel::kInfo : core::LogLevel::kWarn, "pod_admitted",
              fields);
  return finish(AnswerAdmissionReview(review->uid, verdict), injected.outcome);
}

}  // namespace modelplane::controller
