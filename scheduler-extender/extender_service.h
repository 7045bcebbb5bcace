// The extender's scheduling verbs: parses kube-scheduler's request, asks Placement about the
// pod's revision on every candidate node, answers in the request's form, logs the decision as
// one structured line and records its latency.
//
// Pods without the modelplane.io/revision annotation pass through untouched (every node
// passes, every score 0): extenders apply to every profile of a scheduler, and a pod modelplane
// does not manage must never fail because of it. A pod naming a revision the inventory does not
// know (not created yet, a typo, another namespace) is treated the same and logged as a
// warning: the operator reports revision problems, the scheduler is not the place to.
// Until the informers have synced, both verbs answer 503, so a scheduler with `ignorable: true`
// carries on without the extender instead of acting on an empty inventory. With client names
// set, a caller whose verified certificate names none of them gets 403 before its body is read
// as JSON.
//
// Thread safety: the handlers may run on many server threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/http/router.h"
#include "core/log/logger.h"
#include "core/metrics/metrics_registry.h"
#include "scheduler-extender/cache_inventory.h"
#include "scheduler-extender/extender_config.h"
#include "scheduler-extender/extender_protocol.h"
#include "scheduler-extender/extender_request_reader.h"
#include "scheduler-extender/placement.h"

namespace modelplane::extender {

// What the extender decided for one request, before it is rendered.
struct PodDecision {
  enum class Outcome {
    kPlaced,           // the pod names a known revision; verdicts come from Placement
    kUnmanaged,        // no annotation
    kMalformed,        // an annotation that names nothing
    kUnknownRevision,  // names a revision the inventory does not hold
  };
  Outcome outcome = Outcome::kUnmanaged;
  std::string revision_key;           // as the pod named it (kPlaced, kUnknownRevision)
  std::string digest;                 // kPlaced
  std::vector<NodeVerdict> verdicts;  // one per candidate, in order; all pass with 0 unless placed
};

[[nodiscard]] std::string_view OutcomeName(PodDecision::Outcome outcome);

// Pure: the decision for these arguments against this inventory.
[[nodiscard]] PodDecision Decide(const ExtenderArgs& args, const CacheInventory& inventory,
                                 const Placement& placement);

// The answers view the decision's names and reasons: `decision` must outlive them.
[[nodiscard]] FilterResult ToFilterResult(const PodDecision& decision);
[[nodiscard]] std::vector<HostPriority> ToHostPriorities(const PodDecision& decision);

class ExtenderService {
 public:
  struct Options {
    ExtenderRequestLimits limits;
    // Non-empty: a request must come over mutual TLS from a certificate whose CN is one of
    // these, else 403 (ExtenderTlsConfig::client_names).
    std::vector<std::string> client_names;
  };

  [[nodiscard]] static core::Result<std::unique_ptr<ExtenderService>> Create(
      const CacheInventory& inventory, Placement placement, core::Logger logger,
      core::MetricsRegistry& metrics, Options options);
  ExtenderService(const ExtenderService&) = delete;
  ExtenderService& operator=(const ExtenderService&) = delete;

  // Answers 503 until set (the informers have synced).
  void SetSynced(bool synced) { synced_.store(synced); }
  [[nodiscard]] bool synced() const { return synced_.load(); }

  [[nodiscard]] core::ServerResponse HandleFilter(const core::ServerRequest& request) const;
  [[nodiscard]] core::ServerResponse HandlePrioritize(const core::ServerRequest& request) const;

  // POST <prefix>/<filterVerb> and <prefix>/<prioritizeVerb>; the service must outlive the
  // server the router goes to.
  void AddRoutes(core::Router& router, const ExtenderServerConfig& config) const;

 private:
  enum class Verb { kFilter, kPrioritize };
  struct VerbMetrics {
    core::Histogram duration;
    core::CounterFamily* requests = nullptr;
  };

  ExtenderService(const CacheInventory& inventory, Placement placement, core::Logger logger,
                  Options options, VerbMetrics filter, VerbMetrics prioritize);
  core::ServerResponse Handle(Verb verb, const core::ServerRequest& request) const;
  void Count(const VerbMetrics& metrics, std::string_view verb, std::string_view outcome) const;
  void LogDecision(Verb verb, const ExtenderArgs& args, const PodDecision& decision,
                   std::chrono::nanoseconds took) const;

  const CacheInventory& inventory_;
  const Placement placement_;
  const core::Logger logger_;
  const Options options_;
  const VerbMetrics filter_metrics_;
  const VerbMetrics prioritize_metrics_;
  std::atomic<bool> synced_{false};
};

}  // namespace modelplane::extender
