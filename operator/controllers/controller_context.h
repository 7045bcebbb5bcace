// What the operator's controllers share: the API client, the four informers' caches, the
// event recorder, logging, metrics and time. Owned by ControllerManager, which outlives the
// controllers it hands this to.
// Thread safety: every member is safe to use from any worker thread.
#pragma once

#include <string>

#include "core/api/model_cache.h"
#include "core/clock/clock.h"
#include "core/kube/builtin_types.h"
#include "core/kube/event_recorder.h"
#include "core/kube/informer.h"
#include "core/kube/kube_client.h"
#include "core/kube/latest_objects.h"
#include "core/kube/parsed_objects.h"
#include "core/log/logger.h"
#include "core/policy/source_policy.h"
#include "operator/admission/source_rates.h"
#include "operator/certificates/peer_ticket_issuer.h"
#include "operator/controllers/controller_metrics.h"
#include "operator/controllers/workload_inventory.h"
#include "operator/quotas/quota_ledger.h"

namespace modelplane::controller {

struct ControllerContext {
  core::KubeClient& client;
  const core::Informer& revisions;  // ModelRevisions in scope, indexed by status digest
  const core::Informer& caches;     // every ModelCache, indexed by the revisions they list
  const core::Informer& nodes;
  core::ParsedObjects<core::api::ModelCache>& parsed_caches;  // `caches`' objects, parsed once each
  // The newest ModelCache copies this process wrote, and one writer at a time per cache.
  core::LatestObjects& latest_caches;
  core::ParsedObjects<core::Node>& parsed_nodes;  // `nodes`' objects, parsed once each
  const core::Informer& pods;         // non-terminal pods, trimmed (gating/serving_pods.h), indexed
                                      // by node and by the revision they name
  const core::Informer& revocations;  // every ModelRevocation (revocation by digest)
  // ModelQuotas in scope, indexed by namespace (kQuotasByNamespace); null: none apply.
  const core::Informer* quotas = nullptr;
  // Each revision's share of its namespace's quotas (null: not charged, as when no quota).
  QuotaLedger* quota_ledger = nullptr;
  const WorkloadInventory& workloads;  // Deployments and StatefulSets, their history and pods
  core::EventRecorder& events;
  const core::Logger& logger;
  const core::Clock& clock;
  ControllerMetrics& metrics;
  std::string namespace_scope;                        // "" = every namespace
  const core::SourcePolicy* source_policy = nullptr;  // null: none configured, all refused
  // Each source's admission budget rate (null or empty while admission is off): rollouts'
  // predicted staging time.
  const SourceRates* source_rates = nullptr;
  // Signs peer tickets (null: none are written).
  const PeerTicketIssuer* peer_tickets = nullptr;
};

}  // namespace modelplane::controller
