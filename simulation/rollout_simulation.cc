#include "simulation/rollout_simulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>

#include <time.h>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/clock/clock.h"
#include "node-agent/fetch/source_admission.h"
#include "node-agent/fetch/source_order.h"
#include "operator/admission/fleet_plan.h"
#include "operator/admission/grant_allocator.h"
#include "operator/admission/source_budget.h"
#include "operator/controllers/holdings.h"
#include "operator/controllers/peer_choice.h"
#include "simulation/flow_sharing.h"

namespace modelplane::simulation {
namespace {

namespace api = core::api;

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kNotYet = kInfinity;
constexpr std::string_view kNamespace = "models";
constexpr std::string_view kRevisionName = "simulated";
constexpr std::string_view kDigest =
    "sha256:5e1f0c0ffee5e1f0c0ffee5e1f0c0ffee5e1f0c0ffee5e1f0c0ffee5e1f0c0f";
constexpr int kStepsPerLowerBound = 2000;

// The CPU time of this thread: what the policy code costs, whatever else the machine runs.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

class CpuTimer {
 public:
  explicit CpuTimer(double& total) : total_(total), started_(ThreadCpuSeconds()) {}
  CpuTimer(const CpuTimer&) = delete;
  CpuTimer& operator=(const CpuTimer&) = delete;
  ~CpuTimer() { total_ += ThreadCpuSeconds() - started_; }

 private:
  double& total_;
  double started_;
};

// A source as the fetch engine sees it, only so that the engine's own SourceRank orders the
// simulated sources: the simulation never reads through it.
class RankedSource final : public agent::RangeSource {
 public:
  RankedSource(std::string_view tier, bool nearby, bool staging)
      : tier_(tier), nearby_(nearby), staging_(staging) {}
  [[nodiscard]] std::string_view tier() const override { return tier_; }
  [[nodiscard]] std::string_view name() const override { return tier_; }
  [[nodiscard]] std::size_t max_concurrency() const override { return 1; }
  [[nodiscard]] bool MayHoldLater(const core::Sha256Bytes& /*blob*/) const override {
    return staging_;
  }
  [[nodiscard]] bool nearby() const override { return nearby_; }
  [[nodiscard]] core::Status ReadRange(const agent::SourceFile& /*file*/, std::uint64_t /*offset*/,
                                       std::span<std::byte> /*destination*/,
                                       const agent::ReadContext& /*context*/) override {
    return core::MakeError(core::ErrorCode::kUnavailable, "a simulated source moves no bytes");
  }

 private:
  std::string tier_;
  bool nearby_;
  bool staging_;
};

// The fetch engine's rank of each kind of source a simulated node can read from.
struct SourceRanks {
  int ready_peer_nearby;
  int ready_peer_elsewhere;
  int staging_peer;
  int shared_filesystem;
  int origin;
};

SourceRanks RanksFromTheEngine() {
  const core::Sha256Bytes blob{};
  const auto rank = [&](std::string_view tier, bool nearby, bool staging) {
    return agent::SourceRank(RankedSource(tier, nearby, staging), blob);
  };
  return {.ready_peer_nearby = rank(api::kTierPeer, true, false),
          .ready_peer_elsewhere = rank(api::kTierPeer, false, false),
          .staging_peer = rank(api::kTierPeer, true, true),
          .shared_filesystem = rank(api::kTierSharedFilesystem, true, false),
          .origin = rank(api::kTierObjectStore, true, false)};
}

enum class Phase { kIdle, kPending, kStaging, kReady };

std::string_view StateOf(Phase phase) {
  switch (phase) {
    case Phase::kPending: return api::kCacheStatePending;
    case Phase::kStaging: return api::kCacheStateStaging;
    case Phase::kReady: return api::kCacheStateReady;
    case Phase::kIdle: break;
  }
  return {};
}

// One stream group of a node: `streams` requests for `file` to one source.
struct Reading {
  int file = 0;
  int source = 0;  // >= 0: a peer's node index; < 0: origin -1 - source
  int streams = 0;
  double rate = 0;  // this step's
};

int OriginSource(std::size_t origin) {
  return -1 - static_cast<int>(origin);
}
std::size_t OriginOf(int source) {
  return static_cast<std::size_t>(-1 - source);
}

struct Node {
  NodeModel model;
  Phase phase = Phase::kIdle;
  std::vector<double> done;         // bytes of each file
  std::vector<double> verified_at;  // kNotYet until verified; -infinity: held from the start
  std::size_t verified = 0;
  double bytes_done = 0;
  double ready_at = -1;
  std::vector<api::PeerSource> peer_list;  // the operator's, as written in its spec
  std::vector<int> peers;                  // the list its agent acts on, as node indices
  std::unique_ptr<agent::SourceAdmission> admission;
  std::vector<Reading> readings;
  std::vector<int> origin_held;            // admitted streams per origin
  std::vector<double> origin_requests;     // fractions of requests finished, per origin
  std::vector<double> throttled_requests;  // fractions of requests refused, per origin
  bool reassign = false;
  // What the API server holds for it, and so what the operator sees.
  std::shared_ptr<api::ModelCache> cache;
  double last_progress_write = -kInfinity;
  double origin_bytes = 0;
  double peer_bytes = 0;
  int serving_streams = 0;
};

// A spec write on its way to the node's agent (ControlModel::spec_lag_seconds).
struct SpecDelivery {
  double at = 0;
  std::size_t node = 0;
  std::optional<std::vector<api::StreamGrant>> grants;
  std::optional<std::vector<int>> peers;
};

struct OriginWindow {  // what the fleet measured of one origin since the last budget step
  double bytes = 0;
  int peak_streams = 0;
  double requests_ok = 0;
  double throttled = 0;
};

class Simulation {
 public:
  explicit Simulation(const RolloutScenario& scenario)
      : scenario_(scenario), control_(scenario.control), ranks_(RanksFromTheEngine()) {}

  RolloutOutcome Run();

 private:
  void Start();
  void OperatorPass();
  void PlanPeers();
  void Queue();
  void Assign(std::size_t index);
  void ReleaseReadings(Node& node);
  void Deliver(SpecDelivery delivery);
  void DeliverDue();
  double ShareAndChooseStep();
  void Advance(double dt);
  void Report(Node& node, bool state_changed);
  [[nodiscard]] double Now() const { return now_; }
  [[nodiscard]] int UplinkOf(std::size_t node) const { return static_cast<int>(2 * node); }
  [[nodiscard]] int DownlinkOf(std::size_t node) const { return static_cast<int>(2 * node + 1); }
  [[nodiscard]] int OriginLink(std::size_t origin) const {
    return static_cast<int>(2 * nodes_.size() + origin);
  }
  [[nodiscard]] int HostLink() const {
    return control_.shared_host_bytes_per_second > 0
               ? static_cast<int>(2 * nodes_.size() + scenario_.origins.size())
               : kNoLink;
  }

  const RolloutScenario& scenario_;
  const ControlModel& control_;
  const SourceRanks ranks_;
  core::ManualClock clock_;
  double now_ = 0;
  std::vector<Node> nodes_;
  std::vector<double> file_sizes_;
  double model_bytes_ = 0;
  double progress_interval_ = 1;
  std::vector<int> server_streams_;  // streams each node serves now
  std::vector<int> server_readers_;  // readers each node serves now
  std::vector<int> origin_streams_;  // streams each origin serves now
  // The operator's state between passes.
  std::map<std::string, std::string> seeders_;
  std::vector<controller::SourceBudget> budgets_;
  std::vector<controller::SourceCeiling> ceilings_;
  std::vector<OriginWindow> windows_;
  double next_budget_step_ = 0;
  std::map<std::string, std::size_t> index_of_;
  std::deque<SpecDelivery> deliveries_;  // in time order: the lag is one constant
  std::vector<std::size_t> assign_order_;
  std::mt19937_64 random_{1};  // fixed: a scenario always simulates the same way
  std::vector<Flow> flows_;
  RolloutOutcome outcome_;
};

void Simulation::Start() {
  for (const std::uint64_t size : scenario_.file_sizes) {
    file_sizes_.push_back(static_cast<double>(size));
    model_bytes_ += static_cast<double>(size);
  }
  progress_interval_ = control_.progress_interval_seconds
                           ? *control_.progress_interval_seconds
                           : controller::ProgressIntervalSeconds(scenario_.nodes.size());
  const agent::AdmissionOptions admission{.enabled = control_.admission};
  nodes_.reserve(scenario_.nodes.size());
  for (const NodeModel& model : scenario_.nodes) {
    Node node;
    node.model = model;
    node.done.assign(file_sizes_.size(), 0.0);
    node.verified_at.assign(file_sizes_.size(), kNotYet);
    node.admission = std::make_unique<agent::SourceAdmission>(clock_, admission);
    node.admission->SetOperatorAliveUntil(core::Clock::SteadyTime::max());
    node.origin_held.assign(scenario_.origins.size(), 0);
    node.origin_requests.assign(scenario_.origins.size(), 0.0);
    node.throttled_requests.assign(scenario_.origins.size(), 0.0);
    node.cache = std::make_shared<api::ModelCache>();
    node.cache->metadata.name = model.name;
    node.cache->status.emplace();
    node.cache->status->zone = model.zone;
    node.cache->status->peer_endpoint = model.name;  // any non-empty address serves peers
    if (model.holds_ready) {
      node.phase = Phase::kReady;
      node.done = file_sizes_;
      node.verified_at.assign(file_sizes_.size(), -kInfinity);
      node.verified = file_sizes_.size();
      node.bytes_done = model_bytes_;
      node.ready_at = 0;
      node.cache->status->revisions.push_back(
          {.digest = std::string(kDigest),
           .state = std::string(api::kCacheStateReady),
           .bytes_done = static_cast<std::int64_t>(model_bytes_),
           .bytes_total = static_cast<std::int64_t>(model_bytes_)});
    }
    index_of_[model.name] = nodes_.size();
    nodes_.push_back(std::move(node));
  }
  server_streams_.assign(nodes_.size(), 0);
  server_readers_.assign(nodes_.size(), 0);
  assign_order_.resize(nodes_.size());
  std::iota(assign_order_.begin(), assign_order_.end(), std::size_t{0});
  origin_streams_.assign(scenario_.origins.size(), 0);
  windows_.assign(scenario_.origins.size(), {});
  for (const OriginModel& origin : scenario_.origins) {
    ceilings_.push_back({.max_streams = origin.max_streams});
    budgets_.push_back(origin.budget ? *origin.budget
                                     : controller::InitialBudget(ceilings_.back()));
  }
}

void Simulation::Queue() {
  for (Node& node : nodes_) {
    if (node.phase != Phase::kIdle || !node.model.stages || node.model.queued_at > now_) continue;
    node.phase = Phase::kPending;
    node.reassign = true;
    node.cache->spec.revisions.push_back({.revision = {.namespace_name = std::string(kNamespace),
                                                       .name = std::string(kRevisionName)},
                                          .digest = std::string(kDigest),
                                          .reason = std::string(api::kReasonInUse)});
    Report(node, true);
  }
}

void Simulation::Report(Node& node, bool state_changed) {
  if (!state_changed && now_ - node.last_progress_write < progress_interval_) return;
  auto next = std::make_shared<api::ModelCache>(*node.cache);  // the informer's copy is immutable
  auto& entries = next->status->revisions;
  if (entries.empty()) entries.push_back({.digest = std::string(kDigest)});
  entries.front().state = std::string(StateOf(node.phase));
  entries.front().bytes_done = static_cast<std::int64_t>(node.bytes_done);
  entries.front().bytes_total = static_cast<std::int64_t>(model_bytes_);
  node.cache = std::move(next);
  node.last_progress_write = now_;
  ++outcome_.status_writes;
}

void Simulation::OperatorPass() {
  const double started = ThreadCpuSeconds();
  ++outcome_.operator_passes;
  controller::FleetPlanInput input{.seeders = seeders_, .wanted_streams = control_.wanted_streams};
  input.caches.reserve(nodes_.size());
  for (const Node& node : nodes_) input.caches.push_back(node.cache);
  controller::RevisionSources sources{.digest = std::string(kDigest)};
  for (const OriginModel& origin : scenario_.origins) sources.identities.push_back(origin.identity);
  input.revisions[std::string(kNamespace) + "/" + std::string(kRevisionName)] = sources;
  controller::FleetPlan plan;
  {
    const CpuTimer timer(outcome_.policy.fleet_plan);
    plan = controller::PlanFleet(input);
  }
  seeders_ = plan.seeders;
  {
    const CpuTimer timer(outcome_.policy.grants_and_budgets);
    if (now_ >= next_budget_step_) {
      const double interval = control_.budget_step_seconds;
      for (std::size_t origin = 0; origin < scenario_.origins.size(); ++origin) {
        OriginWindow& window = windows_[origin];
        const controller::SourceObservation observation{
            .bytes_per_second = window.bytes / interval,
            .streams_in_use = window.peak_streams,
            .requests_ok = static_cast<std::int64_t>(window.requests_ok),
            .throttled = static_cast<std::int64_t>(window.throttled),
            .ttfb_seconds = scenario_.origins[origin].first_byte_seconds};
        if (plan.demands.contains(scenario_.origins[origin].identity) ||
            observation.requests_ok + observation.throttled > 0) {
          budgets_[origin] =
              controller::StepBudget(budgets_[origin], observation, ceilings_[origin]);
        }
        window = {};
      }
      next_budget_step_ = now_ + interval;
    }
    const auto expires = std::chrono::time_point_cast<std::chrono::microseconds>(
        clock_.WallNow() + std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::duration<double>(control_.grant_ttl_seconds)));
    std::map<std::string, std::vector<api::StreamGrant>> by_node;
    for (const auto& [node, identities] : plan.node_sources) {
      for (const std::string& identity : identities) {
        by_node[node].push_back({.source = identity, .streams = 0, .expires_at = expires});
      }
    }
    for (std::size_t origin = 0; origin < scenario_.origins.size(); ++origin) {
      const std::string& identity = scenario_.origins[origin].identity;
      const auto demands = plan.demands.find(identity);
      if (demands == plan.demands.end()) continue;
      for (const controller::StagingGrant& grant : controller::AllocateGrants(
               budgets_[origin].streams, budgets_[origin].bytes_per_second, demands->second)) {
        for (api::StreamGrant& entry : by_node[grant.node]) {
          if (entry.source != identity) continue;
          entry.streams += grant.streams;
          entry.bytes_per_second = grant.bytes_per_second;
        }
      }
    }
    if (control_.admission) {
      for (auto& [name, grants] : by_node) {
        Deliver({.at = now_ + control_.spec_lag_seconds,
                 .node = index_of_.at(name),
                 .grants = std::move(grants)});
      }
    }
  }
  PlanPeers();
  outcome_.policy.slowest_pass =
      std::max(outcome_.policy.slowest_pass, ThreadCpuSeconds() - started);
}

void Simulation::PlanPeers() {
  const CpuTimer timer(outcome_.policy.peer_choice);
  std::vector<controller::PeerHolder> holders;
  for (const Node& node : nodes_) {
    if (node.cache->status->revisions.empty()) continue;
    const std::string& state = node.cache->status->revisions.front().state;
    const bool ready = state == api::kCacheStateReady;
    if (!ready && state != api::kCacheStateStaging && state != api::kCacheStatePending) continue;
    holders.push_back({.node = node.model.name,
                       .endpoint = node.cache->status->peer_endpoint,
                       .zone = node.model.zone,
                       .ready = ready});
  }
  if (holders.empty()) return;
  const controller::PeerChoice choice(holders);
  for (Node& node : nodes_) {
    if (node.phase == Phase::kIdle || node.phase == Phase::kReady) continue;
    std::vector<api::PeerSource> chosen =
        choice.Choose(node.model.name, node.model.zone, node.peer_list);
    if (chosen == node.peer_list) continue;
    ++outcome_.peer_list_writes;
    node.peer_list = std::move(chosen);
    std::vector<int> peers;
    for (const api::PeerSource& peer : node.peer_list) {
      peers.push_back(static_cast<int>(index_of_.at(peer.node)));
    }
    Deliver({.at = now_ + control_.spec_lag_seconds,
             .node = index_of_.at(node.model.name),
             .peers = std::move(peers)});
  }
}

void Simulation::Deliver(SpecDelivery delivery) {
  deliveries_.push_back(std::move(delivery));
  DeliverDue();
}

void Simulation::DeliverDue() {
  while (!deliveries_.empty() && deliveries_.front().at <= now_) {
    SpecDelivery& delivery = deliveries_.front();
    Node& node = nodes_[delivery.node];
    if (delivery.grants) node.admission->SetGrants(*delivery.grants);
    if (delivery.peers) node.peers = std::move(*delivery.peers);
    node.reassign = true;
    deliveries_.pop_front();
  }
}

void Simulation::ReleaseReadings(Node& node) {
  std::set<int> servers;
  for (const Reading& reading : node.readings) {
    if (reading.source >= 0) {
      server_streams_[static_cast<std::size_t>(reading.source)] -= reading.streams;
      if (servers.insert(reading.source).second) {
        --server_readers_[static_cast<std::size_t>(reading.source)];
      }
    } else {
      origin_streams_[OriginOf(reading.source)] -= reading.streams;
    }
  }
  node.readings.clear();
}

// The fetch engine's choice for each free worker: the first unverified files round-robin, each
// up to its window; for each range the best-ranked source with a free slot (a peer's client
// and server slots, an origin's admission).
void Simulation::Assign(std::size_t index) {
  Node& node = nodes_[index];
  node.reassign = false;
  ReleaseReadings(node);
  if (node.phase == Phase::kIdle || node.phase == Phase::kReady) return;
  std::vector<int> files;
  for (std::size_t file = 0; file < file_sizes_.size() &&
                             files.size() < static_cast<std::size_t>(control_.files_in_flight);
       ++file) {
    if (node.verified_at[file] == kNotYet) files.push_back(static_cast<int>(file));
  }
  std::vector<int> origin_free = node.origin_held;  // admitted streams not yet placed
  std::map<int, int> client_streams;                // this node's streams per peer
  std::map<std::pair<int, int>, int> placed;        // (file, source) -> streams
  std::vector<int> file_streams(files.size(), 0);
  int slots = control_.max_in_flight;
  struct Candidate {
    int rank;
    int source;
  };
  std::vector<Candidate> candidates;
  // Round-robin: one stream per file in turn; earliest first: each file up to its window.
  const int per_turn = control_.earliest_file_first ? control_.window_per_file : 1;
  bool placed_any = true;
  while (slots > 0 && placed_any) {
    placed_any = false;
    for (std::size_t slot = 0; slot < files.size() && slots > 0; ++slot) {
      for (int turn = 0; turn < per_turn && slots > 0; ++turn) {
        if (file_streams[slot] >= control_.window_per_file) break;
        const auto file = static_cast<std::size_t>(files[slot]);
        candidates.clear();
        for (const int peer : node.peers) {
          const Node& holder = nodes_[static_cast<std::size_t>(peer)];
          if (holder.verified_at[file] + control_.source_poll_seconds > now_) {
            continue;  // asked, it answers "not yet"; the engine asks again a poll later
          }
          const bool nearby = holder.model.zone == node.model.zone;
          const int rank = holder.phase != Phase::kReady ? ranks_.staging_peer
                           : nearby                      ? ranks_.ready_peer_nearby
                                                         : ranks_.ready_peer_elsewhere;
          candidates.push_back({rank, peer});
        }
        for (std::size_t origin = 0; origin < scenario_.origins.size(); ++origin) {
          const bool shared = scenario_.origins[origin].kind == OriginKind::kSharedFilesystem;
          candidates.push_back(
              {shared ? ranks_.shared_filesystem : ranks_.origin, OriginSource(origin)});
        }
        std::stable_sort(candidates.begin(), candidates.end(),
                         [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
        for (const Candidate& candidate : candidates) {
          bool taken = false;
          if (candidate.source >= 0) {
            const auto peer = static_cast<std::size_t>(candidate.source);
            int& mine = client_streams[candidate.source];
            const bool has_place = mine > 0 || control_.peer_server_readers == 0 ||
                                   server_readers_[peer] < control_.peer_server_readers;
            if (mine < control_.peer_client_streams && has_place &&
                server_streams_[peer] < control_.peer_server_streams) {
              if (mine == 0) ++server_readers_[peer];
              ++mine;
              ++server_streams_[peer];
              taken = true;
            }
          } else {
            const std::size_t origin = OriginOf(candidate.source);
            const std::string& identity = scenario_.origins[origin].identity;
            if (origin_free[origin] > 0) {
              --origin_free[origin];
              taken = true;
            } else if (node.admission->TryAcquire(identity)) {
              ++node.origin_held[origin];
              taken = true;
            }
            if (taken) ++origin_streams_[origin];
          }
          if (!taken) continue;
          ++placed[{static_cast<int>(file), candidate.source}];
          ++file_streams[slot];
          --slots;
          placed_any = true;
          break;
        }
      }
    }
  }
  // Admitted streams left unplaced go back. kFailed leaves the limiter's window as it was:
  // these streams carried no request, so they say nothing about the source.
  for (std::size_t origin = 0; origin < origin_free.size(); ++origin) {
    for (int unused = 0; unused < origin_free[origin]; ++unused) {
      node.admission->Release(scenario_.origins[origin].identity, agent::RequestOutcome::kFailed, 0,
                              std::nullopt);
      --node.origin_held[origin];
    }
  }
  for (const auto& [key, streams] : placed) {
    node.readings.push_back({.file = key.first, .source = key.second, .streams = streams});
  }
}

// Shares the links among this step's readings and returns how long the step may last: until
// the first file completes, within [shortest, longest].
double Simulation::ShareAndChooseStep() {
  flows_.clear();
  const int host = HostLink();
  for (std::size_t index = 0; index < nodes_.size(); ++index) {
    for (const Reading& reading : nodes_[index].readings) {
      Flow flow{.weight = static_cast<double>(reading.streams)};
      flow.links[0] = DownlinkOf(index);
      flow.links[2] = host;
      if (reading.source >= 0) {
        flow.links[1] = UplinkOf(static_cast<std::size_t>(reading.source));
      } else {
        const std::size_t origin = OriginOf(reading.source);
        const OriginModel& model = scenario_.origins[origin];
        flow.links[1] = OriginLink(origin);
        if (control_.origin_on_shared_host) flow.links[3] = host;
        // Requests above the origin's threshold are refused: the share that gets through.
        double passing = 1;
        if (model.throttle_above_streams > 0 &&
            origin_streams_[origin] > model.throttle_above_streams) {
          passing = static_cast<double>(model.throttle_above_streams) /
                    static_cast<double>(origin_streams_[origin]);
        }
        flow.cap = flow.weight * model.stream_bytes_per_second * passing;
      }
      flows_.push_back(flow);
    }
  }
  std::vector<double> capacities(2 * nodes_.size() + scenario_.origins.size() + 1, 0.0);
  if (control_.hash_bytes_per_second > 0) {
    // Each file being fetched is a link of its own: its hash, one core.
    std::size_t flow = 0;
    for (const Node& node : nodes_) {
      std::map<int, int> hash_links;
      for (const Reading& reading : node.readings) {
        auto [link, added] =
            hash_links.try_emplace(reading.file, static_cast<int>(capacities.size()));
        if (added) capacities.push_back(control_.hash_bytes_per_second);
        flows_[flow++].links[4] = link->second;
      }
    }
  }
  for (std::size_t index = 0; index < nodes_.size(); ++index) {
    const NodeModel& model = nodes_[index].model;
    capacities[static_cast<std::size_t>(UplinkOf(index))] =
        model.serve_bytes_per_second > 0
            ? std::min(model.nic_bytes_per_second, model.serve_bytes_per_second)
            : model.nic_bytes_per_second;
    capacities[static_cast<std::size_t>(DownlinkOf(index))] =
        std::min(model.nic_bytes_per_second, model.write_bytes_per_second);
  }
  for (std::size_t origin = 0; origin < scenario_.origins.size(); ++origin) {
    capacities[static_cast<std::size_t>(OriginLink(origin))] =
        scenario_.origins[origin].bytes_per_second;
  }
  if (host != kNoLink) {
    capacities[static_cast<std::size_t>(host)] = control_.shared_host_bytes_per_second;
  }
  ShareLinks(capacities, flows_);
  double step = kInfinity;
  std::size_t flow = 0;
  for (Node& node : nodes_) {
    std::map<int, double> file_rates;
    for (Reading& reading : node.readings) {
      reading.rate = flows_[flow++].rate;
      file_rates[reading.file] += reading.rate;
    }
    for (const auto& [file, rate] : file_rates) {
      if (rate <= 0) continue;
      step = std::min(step, (file_sizes_[static_cast<std::size_t>(file)] -
                             node.done[static_cast<std::size_t>(file)]) /
                                rate);
    }
  }
  return step;
}

void Simulation::Advance(double dt) {
  for (std::size_t origin = 0; origin < scenario_.origins.size(); ++origin) {
    windows_[origin].peak_streams =
        std::max(windows_[origin].peak_streams, origin_streams_[origin]);
  }
  std::vector<double> served(nodes_.size(), 0.0);
  for (std::size_t index = 0; index < nodes_.size(); ++index) {
    Node& node = nodes_[index];
    bool first_bytes = false;
    for (const Reading& reading : node.readings) {
      const auto file = static_cast<std::size_t>(reading.file);
      const double bytes = std::min(reading.rate * dt, file_sizes_[file] - node.done[file]);
      if (bytes <= 0) continue;
      node.done[file] += bytes;
      node.bytes_done += bytes;
      first_bytes = first_bytes || node.phase == Phase::kPending;
      if (reading.source >= 0) {
        node.peer_bytes += bytes;
        served[static_cast<std::size_t>(reading.source)] += bytes / dt;
        continue;
      }
      const std::size_t origin = OriginOf(reading.source);
      const OriginModel& model = scenario_.origins[origin];
      const std::string& identity = model.identity;
      node.origin_bytes += bytes;
      outcome_.origin_bytes_by_zone[node.model.zone] += bytes;
      windows_[origin].bytes += bytes;
      // Each finished request hands its stream back and asks again, as a fetch worker does,
      // so the agent's limiter sees every answer.
      node.origin_requests[origin] += bytes / control_.range_bytes;
      if (model.throttle_above_streams > 0 &&
          origin_streams_[origin] > model.throttle_above_streams) {
        const double request_seconds =
            model.first_byte_seconds + control_.range_bytes / model.stream_bytes_per_second;
        const double refused_share = 1.0 - static_cast<double>(model.throttle_above_streams) /
                                               static_cast<double>(origin_streams_[origin]);
        node.throttled_requests[origin] += reading.streams * dt / request_seconds * refused_share;
      }
      const auto settle = [&](double& count, agent::RequestOutcome outcome, double& tally) {
        while (count >= 1) {
          count -= 1;
          tally += 1;
          node.admission->Release(identity, outcome,
                                  static_cast<std::uint64_t>(control_.range_bytes), std::nullopt);
          if (!node.admission->TryAcquire(identity)) {
            --node.origin_held[origin];
            node.reassign = true;
          }
        }
      };
      settle(node.origin_requests[origin], agent::RequestOutcome::kOk,
             windows_[origin].requests_ok);
      settle(node.throttled_requests[origin], agent::RequestOutcome::kThrottled,
             windows_[origin].throttled);
      node.origin_held[origin] = std::max(0, node.origin_held[origin]);
    }
    if (first_bytes) {
      node.phase = Phase::kStaging;
      Report(node, true);
    }
  }
  now_ += dt;
  clock_.Advance(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(dt)));
  for (std::size_t index = 0; index < nodes_.size(); ++index) {
    Node& node = nodes_[index];
    outcome_.peak_peer_upload_bytes_per_second =
        std::max(outcome_.peak_peer_upload_bytes_per_second, served[index]);
    outcome_.peak_peer_clients = std::max(outcome_.peak_peer_clients, server_streams_[index]);
    if (node.phase != Phase::kStaging) continue;
    bool completed = false;
    for (const Reading& reading : node.readings) {
      const auto file = static_cast<std::size_t>(reading.file);
      // A file within a byte of its size is done: rates times steps are not exact.
      if (node.verified_at[file] == kNotYet && node.done[file] >= file_sizes_[file] - 1) {
        node.verified_at[file] = now_;
        ++node.verified;
        completed = true;
      }
    }
    if (!completed) {
      Report(node, false);
      continue;
    }
    node.reassign = true;
    if (node.verified == file_sizes_.size()) {
      node.phase = Phase::kReady;
      node.ready_at = now_;
      node.bytes_done = model_bytes_;
      ReleaseReadings(node);
      for (std::size_t origin = 0; origin < node.origin_held.size(); ++origin) {
        for (; node.origin_held[origin] > 0; --node.origin_held[origin]) {
          node.admission->Release(scenario_.origins[origin].identity,
                                  agent::RequestOutcome::kFailed, 0, std::nullopt);
        }
      }
      Report(node, true);
    } else {
      Report(node, false);
    }
  }
}

RolloutOutcome Simulation::Run() {
  const auto wall_started = std::chrono::steady_clock::now();
  Start();
  outcome_.model_bytes = model_bytes_;
  double lower_bound = kInfinity;
  for (const NodeModel& model : scenario_.nodes) {
    lower_bound = std::min(lower_bound, LowerBoundSeconds(scenario_, model));
  }
  const double shortest = std::max(1e-5, lower_bound / kStepsPerLowerBound);
  double next_pass = 0;
  double next_poll = 0;
  while (now_ < scenario_.time_limit_seconds) {
    Queue();
    if (now_ >= next_pass) {
      OperatorPass();
      next_pass = now_ + control_.operator_pass_seconds;
    }
    DeliverDue();
    const bool poll = now_ >= next_poll;
    if (poll) next_poll = now_ + control_.source_poll_seconds;
    if (poll) {
      // Every waiting range asks again: slots a server or origin had given go back, and the
      // nodes ask in a new order each time, so a busy peer's streams pass between its readers
      // over a transfer as its per-request answers do.
      if (!control_.readers_keep_their_places) {
        for (Node& node : nodes_) ReleaseReadings(node);
      }
      std::shuffle(assign_order_.begin(), assign_order_.end(), random_);
    }
    for (const std::size_t index : assign_order_) {
      Node& node = nodes_[index];
      if (node.phase == Phase::kPending || node.phase == Phase::kStaging) {
        if (poll || node.reassign) Assign(index);
      }
    }
    bool waiting = false;
    double next_queue = kInfinity;
    for (const Node& node : nodes_) {
      if (!node.model.stages) continue;
      if (node.phase != Phase::kReady) waiting = true;
      if (node.phase == Phase::kIdle) next_queue = std::min(next_queue, node.model.queued_at);
    }
    if (!waiting) {
      outcome_.complete = true;
      break;
    }
    double dt = ShareAndChooseStep();
    const double next_delivery = deliveries_.empty() ? kInfinity : deliveries_.front().at;
    dt =
        std::min({dt, next_pass - now_, next_poll - now_, next_queue - now_, next_delivery - now_});
    dt = std::max(dt, shortest);
    Advance(dt);
    ++outcome_.steps;
  }
  outcome_.finished_at = now_;
  for (const Node& node : nodes_) {
    if (!node.model.stages) continue;
    outcome_.nodes.push_back({.name = node.model.name,
                              .zone = node.model.zone,
                              .queued_at = node.model.queued_at,
                              .ready_at = node.ready_at,
                              .origin_bytes = node.origin_bytes,
                              .peer_bytes = node.peer_bytes});
  }
  outcome_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_started).count();
  return std::move(outcome_);
}

}  // namespace

RolloutOutcome Simulate(const RolloutScenario& scenario) {
  return Simulation(scenario).Run();
}

double StagingQuantile(const RolloutOutcome& outcome, double q) {
  std::vector<double> times;
  for (const NodeOutcome& node : outcome.nodes) {
    if (node.ready_at >= 0) times.push_back(node.ready_at - node.queued_at);
  }
  if (times.empty()) return -1;
  std::sort(times.begin(), times.end());
  // Nearest rank: the smallest time at least q of the nodes reached.
  const auto rank = static_cast<std::size_t>(
      std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(times.size())));
  return times[std::max<std::size_t>(rank, 1) - 1];
}

double OriginCopiesPerZone(const RolloutOutcome& outcome) {
  std::set<std::string> zones;
  for (const NodeOutcome& node : outcome.nodes) zones.insert(node.zone);
  if (zones.empty() || outcome.model_bytes <= 0) return 0;
  double bytes = 0;
  for (const auto& [zone, zone_bytes] : outcome.origin_bytes_by_zone) bytes += zone_bytes;
  return bytes / outcome.model_bytes / static_cast<double>(zones.size());
}

}  // namespace modelplane::simulation
