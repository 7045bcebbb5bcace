#include "operator/webhook/revision_webhook.h"

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/api/model_revision_validation.h"
#include "core/api/object_key.h"
#include "core/signing/model_signature_verifier.h"
#include "core/signing/signature_time.h"
#include "operator/quotas/quota_grant.h"
#include "operator/webhook/admission_answer.h"

namespace modelplane::controller {
namespace {

namespace http = boost::beast::http;

AdmissionVerdict Refuse(int code, std::string message) {
  return {.allowed = false, .code = code, .message = "modelplane: " + std::move(message)};
}

}  // namespace

AdmissionVerdict ReviewModelRevision(const nlohmann::json& object,
                                     const std::string& namespace_name,
                                     const core::SourcePolicy* policy,
                                     const core::api::NamespaceQuota* quota) {
  auto revision = core::api::ModelRevisionFromJson(object);
  if (!revision) return Refuse(400, revision.error().message());
  if (auto valid =
          core::api::ProblemsToStatus(core::api::ValidateModelRevisionSpec(revision->spec));
      !valid) {
    return Refuse(422, valid.error().message());
  }
  // The object's namespace may be empty on CREATE (kubectl -n fills the request's).
  const std::string& where = revision->metadata.namespace_name.empty()
                                 ? namespace_name
                                 : revision->metadata.namespace_name;
  if (auto allowed = core::AuthorizeSources(policy, where, revision->spec.sources); !allowed) {
    return Refuse(403, allowed.error().message());
  }
  auto signed_by =
      core::VerifyModelSignatures(policy ? &policy->signatures : nullptr, where, revision->spec,
                                  core::SignatureTime(*revision, std::chrono::system_clock::now()));
  if (!signed_by) {
    return Refuse(403, fmt::format("{}: {}", signed_by.error().reason, signed_by.error().message));
  }
  if (quota != nullptr && revision->spec.prestage) {
    std::int64_t total = 0;
    for (const core::api::ModelFile& file : revision->spec.files) total += file.size;
    if (auto beyond = PrestageBeyondQuota(total, revision->spec.prestage->nodes, *quota, where)) {
      return Refuse(403, "QuotaExceeded: " + *beyond);
    }
  }
  return {};
}

core::Result<std::unique_ptr<RevisionWebhook>> RevisionWebhook::Create(
    std::optional<core::SourcePolicy> policy, core::Logger logger, core::MetricsRegistry& metrics,
    QuotaLookup quotas) {
  auto requests = metrics.AddCounter(
      {.name = "modelplane_revision_webhook_requests_total",
       .help = "AdmissionReviews for ModelRevisions by outcome (allowed, refused, unmanaged, "
               "bad_request).",
       .label_names = {"outcome"}});
  if (!requests) return std::unexpected(requests.error());
  return std::unique_ptr<RevisionWebhook>(
      new RevisionWebhook(std::move(policy), std::move(logger), *requests, std::move(quotas)));
}

RevisionWebhook::RevisionWebhook(std::optional<core::SourcePolicy> policy, core::Logger logger,
                                 core::CounterFamily* requests, QuotaLookup quotas)
    : policy_(std::move(policy)),
      logger_(std::move(logger)),
      requests_(requests),
      quotas_(std::move(quotas)) {}

void RevisionWebhook::AddRoutes(core::Router& router) const {
  router.Handle(http::verb::post, std::string(kRevisionWebhookPath),
                [this](const core::ServerRequest& request) { return Handle(request); });
}

void RevisionWebhook::Count(std::string_view outcome) const {
  // A fixed set of outcomes: WithLabels cannot reach the family's child limit.
  if (auto counter = requests_->WithLabels({outcome})) counter->Increment();
}

core::ServerResponse RevisionWebhook::Handle(const core::ServerRequest& request) const {
  auto review = ParseAdmissionReview(request.body);
  if (!review) {
    logger_.Warn("admission_review_rejected",
                 {{"remote", request.remote_endpoint}, {"error", review.error().message()}});
    Count("bad_request");
    return core::ServerResponse::Text(http::status::bad_request, review.error().message() + "\n");
  }
  if (review->operation != "CREATE" || review->kind != "ModelRevision" ||
      review->group != core::api::kApiGroup) {
    Count("unmanaged");
    return AnswerAdmissionReview(review->uid, {});
  }
  // A quota that cannot be read now is left to the operator's controller, which enforces it on
  // every pass: admission does not fail for it.
  std::optional<core::api::NamespaceQuota> quota;
  if (quotas_) {
    if (auto found = quotas_(review->namespace_name)) {
      quota = std::move(*found);
    } else {
      logger_.Warn("model_quota_lookup_failed",
                   {{"namespace", review->namespace_name}, {"error", found.error().ToString()}});
    }
  }
  const AdmissionVerdict verdict =
      ReviewModelRevision(review->object, review->namespace_name, policy_ ? &*policy_ : nullptr,
                          quota ? &*quota : nullptr);
  const std::string key = core::api::ObjectKey(review->namespace_name, review->name);
  logger_.Log(verdict.allowed ? core::LogLevel::kInfo : core::LogLevel::kWarn, "revision_admitted",
              {{"revision", key},
               {"allowed", verdict.allowed},
               {"dry_run", review->dry_run},
               {"reason", verdict.message}});
  Count(verdict.allowed ? "allowed" : "refused");
  return AnswerAdmissionReview(review->uid, verdict);
}

}  // namespace modelplane::controller
