// The mutating admission webhook for serving pods, as HTTP routes: kube-apiserver POSTs an
// AdmissionReview for every pod CREATE that carries modelplane.io/revision (the
// MutatingWebhookConfiguration's matchConditions send no other pod), and gets back the
// injection of pod_injection.h as a JSONPatch, or a refusal with its reason.
//
// Revisions are looked up in an informer's store, so admission never waits on the API server;
// until that informer has listed, the webhook answers 503 and the API server, with
// failurePolicy Fail, refuses the pod with that message (the ReplicaSet retries). Only CREATE is
// mutated: scheduling gates can be added only at creation, and a pod whose gate was removed
// must never be gated again.
// Thread safety: Handle may run on any number of server threads at once.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "core/error/error.h"
#include "core/http/router.h"
#include "core/kube/object_store.h"
#include "core/log/logger.h"
#include "core/metrics/counter.h"
#include "core/metrics/histogram.h"
#include "core/metrics/metrics_registry.h"
#include "core/policy/source_policy.h"
#include "operator/webhook/pod_injection.h"

namespace modelplane::controller {

inline constexpr std::string_view kPodWebhookPath = "/mutate-pods";

class PodWebhook {
 public:
  // `revisions`: the ModelRevisions the webhook may resolve (every namespace the operator
  // serves); it must outlive the webhook. A revision the source policy refuses is treated as
  // invalid (`policy` null: no policy, every revision with sources refused).
  [[nodiscard]] static core::Result<std::unique_ptr<PodWebhook>> Create(
      const core::ObjectStore& revisions, std::optional<core::SourcePolicy> policy,
      InjectionOptions options, core::Logger logger, core::MetricsRegistry& metrics);

  void AddRoutes(core::Router& router) const;
  void SetSynced(bool synced) { synced_.store(synced); }
  [[nodiscard]] bool synced() const { return synced_.load(); }

  [[nodiscard]] core::ServerResponse Handle(const core::ServerRequest& request) const;
  // What the store says of a revision, as the injection needs it.
  [[nodiscard]] RevisionLookup Lookup(const std::string& namespace_name,
                                      const std::string& name) const;

 private:
  PodWebhook(const core::ObjectStore& revisions, std::optional<core::SourcePolicy> policy,
             InjectionOptions options, core::Logger logger, core::CounterFamily* requests,
             core::Histogram duration);
  void Count(std::string_view outcome) const;

  const core::ObjectStore& revisions_;
  const std::optional<core::SourcePolicy> policy_;
  const InjectionOptions options_;
  const core::Logger logger_;
  core::CounterFamily* requests_;
  core::Histogram duration_;
  std::atomic<bool> synced_{false};
};

}  // namespace modelplane::controller
