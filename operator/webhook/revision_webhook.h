// The validating admission webhook for ModelRevisions: kube-apiserver POSTs an AdmissionReview
// for every ModelRevision CREATE (the ValidatingWebhookConfiguration sends no other operation)
// and gets back allowed, or a refusal that names the broken rule: a spec the validator refuses
// (core/api/model_revision_validation.h), a source the administrator's source policy does
// not allow (core/policy/source_policy.h), or a model signature that does not verify for the
// revision's namespace, or is missing where the policy requires one
// (core/signing/model_signature_verifier.h; the refusal starts with its fixed reason), or a
// prestage ask that its namespace's ModelQuotas could never grant whole (more prestaged bytes
// than the limit for every revision of the namespace together; operator/quotas/quota_grant.h).
// What other revisions hold is the operator's to weigh, pass by pass: a revision that fits alone
// is admitted and, where others leave too little room, cut with a reason on its status.
//
// Only CREATE is checked. A revision's sources and signatures are immutable (CEL on the CRD), and
// an UPDATE must always go through: revoking a revision, or the operator removing its finalizer,
// after the policy was narrowed. A revision that reached the API server some other way (the webhook
// down, created before the policy changed) is refused again by the operator's controller
// (status Valid=False, SourcePolicyDenied or a Signature* reason) and by every node agent
// before it reads anything.
// Thread safety: Handle may run on any number of server threads at once.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/api/model_quota.h"
#include "core/error/error.h"
#include "core/http/router.h"
#include "core/log/logger.h"
#include "core/metrics/counter.h"
#include "core/metrics/metrics_registry.h"
#include "core/policy/source_policy.h"
#include "operator/webhook/admission_review.h"

namespace modelplane::controller {

inline constexpr std::string_view kRevisionWebhookPath = "/validate-modelrevisions";

// The decision for one ModelRevision in `namespace_name`; `policy` null: no policy configured;
// `quota` null: no ModelQuota known for the namespace.
[[nodiscard]] AdmissionVerdict ReviewModelRevision(
    const nlohmann::json& object, const std::string& namespace_name,
    const core::SourcePolicy* policy, const core::api::NamespaceQuota* quota = nullptr);

// What the namespace's ModelQuotas allow together, read when a revision is created.
using QuotaLookup =
    std::function<core::Result<core::api::NamespaceQuota>(const std::string& namespace_name)>;

class RevisionWebhook {
 public:
  // `quotas` empty: quotas are left to the operator's controller.
  [[nodiscard]] static core::Result<std::unique_ptr<RevisionWebhook>> Create(
      std::optional<core::SourcePolicy> policy, core::Logger logger, core::MetricsRegistry& metrics,
      QuotaLookup quotas = {});

  void AddRoutes(core::Router& router) const;
  [[nodiscard]] core::ServerResponse Handle(const core::ServerRequest& request) const;

 private:
  RevisionWebhook(std::optional<core::SourcePolicy> policy, core::Logger logger,
                  core::CounterFamily* requests, QuotaLookup quotas);
  void Count(std::string_view outcome) const;

  const std::optional<core::SourcePolicy> policy_;
  const core::Logger logger_;
  core::CounterFamily* requests_;
  const QuotaLookup quotas_;
};

}  // namespace modelplane::controller
