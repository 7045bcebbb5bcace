#include "scheduler-extender/extender_service.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/metrics/histogram_buckets.h"
#include "scheduler-extender/pod_revision.h"
#include "scheduler-extender/revision_holdings.h"

namespace modelplane::extender {
namespace {

namespace http = boost::beast::http;

// Candidates decided together (Decide): about 32 snapshots' hot lines fit in a core's L1 cache.
constexpr std::size_t kDecisionChunk = 32;

// Joined lists in a log line stay bounded however many nodes a cluster has.
constexpr std::size_t kMaxLoggedNodes = 200;

// "a:10,b:0" / "a,b" / "a: reason|b: reason", at most kMaxLoggedNodes entries then "+N more".
template <typename Format>
std::string JoinVerdicts(const std::vector<NodeVerdict>& verdicts, char separator,
                         bool (*include)(const NodeVerdict&), Format format) {
  std::string out;
  std::size_t shown = 0;
  std::size_t skipped = 0;
  for (const NodeVerdict& verdict : verdicts) {
    if (!include(verdict)) continue;
    if (shown == kMaxLoggedNodes) {
      ++skipped;
      continue;
    }
    if (shown++ > 0) out += separator;
    format(out, verdict);
  }
  if (skipped > 0) out += fmt::format("{}+{} more", separator, skipped);
  return out;
}

}  // namespace

std::string_view OutcomeName(PodDecision::Outcome outcome) {
  switch (outcome) {
    case PodDecision::Outcome::kPlaced: return "placed";
    case PodDecision::Outcome::kUnmanaged: return "unmanaged";
    case PodDecision::Outcome::kMalformed: return "malformed_annotation";
    case PodDecision::Outcome::kUnknownRevision: return "unknown_revision";
  }
  return "unknown";
}

PodDecision Decide(const ExtenderArgs& args, const CacheInventory& inventory,
                   const Placement& placement) {
  PodDecision decision;
  const PodRevision named = RevisionOfPod(args.pod);
  std::shared_ptr<const RevisionInfo> revision;
  switch (named.kind) {
    case PodRevision::Kind::kNone: decision.outcome = PodDecision::Outcome::kUnmanaged; break;
    case PodRevision::Kind::kMalformed: decision.outcome = PodDecision::Outcome::kMalformed; break;
    case PodRevision::Kind::kNamed:
      decision.revision_key = named.key;
      revision = inventory.FindRevision(named.key);
      decision.outcome =
          revision ? PodDecision::Outcome::kPlaced : PodDecision::Outcome::kUnknownRevision;
      break;
  }
  if (revision) {
    decision.digest = revision->digest;
    RevisionHoldings holdings_of = inventory.HoldingsOf(*revision);
    const std::span<const std::string> nodes = args.node_names;
    decision.verdicts.reserve(nodes.size());
    // A chunk at a time: each step reads the chunk's snapshots while the CPU's cache still
    // holds what the step before brought in; step by step over thousands of nodes, every step
    // read every snapshot from memory again.
    for (std::size_t first = 0; first < nodes.size(); first += kDecisionChunk) {
      const auto chunk = nodes.subspan(first, std::min(kDecisionChunk, nodes.size() - first));
      const auto caches = inventory.FindCaches(chunk);
      placement.EvaluateInto(*revision, chunk, caches, holdings_of.Of(caches), decision.verdicts);
    }
    return decision;
  }
  decision.verdicts.reserve(args.node_names.size());
  for (const std::string& node : args.node_names) decision.verdicts.push_back({.node = node});
  return decision;
}

FilterResult ToFilterResult(const PodDecision& decision) {
  FilterResult result;
  result.passed.reserve(decision.verdicts.size());
  for (const NodeVerdict& verdict : decision.verdicts) {
    if (verdict.passed) {
      result.passed.emplace_back(verdict.node);
    } else {
      result.failed.push_back({.node = verdict.node, .reason = verdict.reason});
    }
  }
  return result;
}

std::vector<HostPriority> ToHostPriorities(const PodDecision& decision) {
  std::vector<HostPriority> priorities;
  priorities.reserve(decision.verdicts.size());
  for (const NodeVerdict& verdict : decision.verdicts) {
    priorities.push_back({.host = verdict.node, .score = verdict.score});
  }
  return priorities;
}

core::Result<std::unique_ptr<ExtenderService>> ExtenderService::Create(
    const CacheInventory& inventory, Placement placement, core::Logger logger,
    core::MetricsRegistry& metrics, Options options) {
  // 100 us to about 3.3 s: a names-only decision is well under a millisecond, a 5000-node
  // NodeList body hundreds of milliseconds (docs/scheduler-extender.md), and kube-scheduler
  // gives up at its httpTimeout (5 s by default).
  auto buckets = core::ExponentialBuckets(0.0001, 2, 16);
  if (!buckets) return std::unexpected(buckets.error());
  auto duration = metrics.AddHistogram(
      {.name = "modelplane_extender_request_duration_seconds",
       .help = "Time to answer one kube-scheduler extender call, from request read to response.",
       .label_names = {"verb"}},
      std::move(*buckets));
  if (!duration) return std::unexpected(duration.error());
  auto requests = metrics.AddCounter({.name = "modelplane_extender_requests_total",
                                      .help = "kube-scheduler extender calls by verb and outcome.",
                                      .label_names = {"verb", "outcome"}});
  if (!requests) return std::unexpected(requests.error());
  auto filter = (*duration)->WithLabels({"filter"});
  auto prioritize = (*duration)->WithLabels({"prioritize"});
  if (!filter) return std::unexpected(filter.error());
  if (!prioritize) return std::unexpected(prioritize.error());
  return std::unique_ptr<ExtenderService>(
      new ExtenderService(inventory, std::move(placement), std::move(logger), std::move(options),
                          {.duration = *filter, .requests = *requests},
                          {.duration = *prioritize, .requests = *requests}));
}

ExtenderService::ExtenderService(const CacheInventory& inventory, Placement placement,
                                 core::Logger logger, Options options, VerbMetrics filter,
                                 VerbMetrics prioritize)
    : inventory_(inventory),
      placement_(std::move(placement)),
      logger_(std::move(logger)),
      options_(std::move(options)),
      filter_metrics_(filter),
      prioritize_metrics_(prioritize) {}

core::ServerResponse ExtenderService::HandleFilter(const core::ServerRequest& request) const {
  return Handle(Verb::kFilter, request);
}

core::ServerResponse ExtenderService::HandlePrioritize(const core::ServerRequest& request) const {
  return Handle(Verb::kPrioritize, request);
}

void ExtenderService::AddRoutes(core::Router& router, const ExtenderServerConfig& config) const {
  router.Handle(http::verb::post, config.FilterPath(),
                [this](const core::ServerRequest& request) { return HandleFilter(request); });
  router.Handle(http::verb::post, config.PrioritizePath(),
                [this](const core::ServerRequest& request) { return HandlePrioritize(request); });
}

void ExtenderService::Count(const VerbMetrics& metrics, std::string_view verb,
                            std::string_view outcome) const {
  // The label values are a fixed set, so WithLabels cannot hit the family's child limit.
  if (auto counter = metrics.requests->WithLabels({verb, outcome})) counter->Increment();
}

core::ServerResponse ExtenderService::Handle(Verb verb, const core::ServerRequest& request) const {
  const auto started = std::chrono::steady_clock::now();
  const VerbMetrics& metrics = verb == Verb::kFilter ? filter_metrics_ : prioritize_metrics_;
  const std::string_view verb_name = verb == Verb::kFilter ? "filter" : "prioritize";
  auto finish = [&](core::ServerResponse response, std::string_view outcome) {
    Count(metrics, verb_name, outcome);
    metrics.duration.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    return response;
  };

  if (!options_.client_names.empty()) {
    const std::string name =
        request.peer_certificate ? request.peer_certificate->common_name : std::string();
    if (name.empty() || std::find(options_.client_names.begin(), options_.client_names.end(),
                                  name) == options_.client_names.end()) {
      logger_.Warn("extender_request_forbidden",
                   {{"verb", verb_name},
                    {"remote", request.remote_endpoint},
                    {"client", request.peer_certificate ? request.peer_certificate->subject : ""}});
      return finish(
          core::ServerResponse::Text(http::status::forbidden, "client certificate not allowed\n"),
          "forbidden");
    }
  }
  if (!synced_.load()) {
    return finish(
        core::ServerResponse::Text(http::status::service_unavailable, "inventory not synced yet\n"),
        "not_ready");
  }
  auto args = ParseExtenderArgs(request.body, options_.limits);
  if (!args) {
    logger_.Warn("extender_request_rejected", {{"verb", verb_name},
                                               {"remote", request.remote_endpoint},
                                               {"error", args.error().message()}});
    return finish(
        core::ServerResponse::Text(http::status::bad_request, args.error().message() + "\n"),
        "bad_request");
  }
  const PodDecision decision = Decide(*args, inventory_, placement_);
  core::ServerResponse response = core::ServerResponse::Text(
      http::status::ok,
      verb == Verb::kFilter ? FilterResultBody(*args, ToFilterResult(decision))
                            : HostPriorityListBody(ToHostPriorities(decision)),
      "application/json");
  LogDecision(verb, *args, decision, std::chrono::steady_clock::now() - started);
  return finish(std::move(response), OutcomeName(decision.outcome));
}

void ExtenderService::LogDecision(Verb verb, const ExtenderArgs& args, const PodDecision& decision,
                                  std::chrono::nanoseconds took) const {
  const std::string pod = args.pod.Key();
  const std::string_view outcome = OutcomeName(decision.outcome);
  const std::string_view form = args.form == NodeForm::kNodeNames ? "names" : "list";
  const double seconds = std::chrono::duration<double>(took).count();
  const auto level = decision.outcome == PodDecision::Outcome::kUnmanaged ? core::LogLevel::kDebug
                     : decision.outcome == PodDecision::Outcome::kPlaced  ? core::LogLevel::kInfo
                                                                          : core::LogLevel::kWarn;
  if (!logger_.Enabled(level)) return;
  if (verb == Verb::kFilter) {
    const std::string passed = JoinVerdicts(
        decision.verdicts, ',', [](const NodeVerdict& v) { return v.passed; },
        [](std::string& out, const NodeVerdict& v) { out += v.node; });
    const std::string failed = JoinVerdicts(
        decision.verdicts, '|', [](const NodeVerdict& v) { return !v.passed; },
        [](std::string& out, const NodeVerdict& v) { out += v.node + ": " + v.reason; });
    const core::LogField fields[] = {{"pod", pod},
                                     {"revision", decision.revision_key},
                                     {"digest", decision.digest},
                                     {"outcome", outcome},
                                     {"form", form},
                                     {"nodes", decision.verdicts.size()},
                                     {"passed", passed},
                                     {"failed", failed},
                                     {"seconds", seconds}};
    logger_.Log(level, "filter_decided", fields);
  } else {
    const std::string scores = JoinVerdicts(
        decision.verdicts, ',', [](const NodeVerdict&) { return true; },
        [](std::string& out, const NodeVerdict& v) {
          out += fmt::format("{}:{}", v.node, v.score);
        });
    const core::LogField fields[] = {{"pod", pod},
                                     {"revision", decision.revision_key},
                                     {"digest", decision.digest},
                                     {"outcome", outcome},
                                     {"form", form},
                                     {"nodes", decision.verdicts.size()},
                                     {"scores", scores},
                                     {"seconds", seconds}};
    logger_.Log(level, "prioritize_decided", fields);
  }
}

}  // namespace modelplane::extender
