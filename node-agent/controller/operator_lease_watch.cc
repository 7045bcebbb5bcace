#include "node-agent/controller/operator_lease_watch.h"

#include "core/api/object_key.h"
#include "core/api/timestamp.h"
#include "core/kube/resource_type.h"

namespace modelplane::agent {

core::Clock::WallTime::duration LeaseHolderAliveFor(const core::Lease& lease,
                                                    core::Clock::WallTime now,
                                                    std::chrono::seconds clock_skew) {
  using Duration = core::Clock::WallTime::duration;
  if (lease.holder_identity.empty() || lease.lease_duration_seconds <= 0) return Duration::zero();
  const auto renewed = core::api::ParseTimestamp(lease.renew_time);
  if (!renewed) return Duration::zero();
  const auto until = *renewed + std::chrono::seconds(lease.lease_duration_seconds) + clock_skew;
  return until > now ? std::chrono::duration_cast<Duration>(until - now) : Duration::zero();
}

bool LeaseShowsLiveHolder(const core::Lease& lease, core::Clock::WallTime now,
                          std::chrono::seconds clock_skew) {
  return LeaseHolderAliveFor(lease, now, clock_skew) > core::Clock::WallTime::duration::zero();
}

OperatorLeaseWatch::OperatorLeaseWatch(core::KubeClient& client, SourceAdmission& admission,
                                       const core::Logger& logger, const core::Clock& clock,
                                       OperatorLeaseWatchOptions options)
    : client_(client),
      admission_(admission),
      logger_(logger.WithComponent("node-agent.operator-lease")),
      clock_(clock),
      options_(std::move(options)) {}

void OperatorLeaseWatch::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void OperatorLeaseWatch::Stop() {
  stop_.Cancel();
  if (thread_.joinable()) thread_.join();
}

bool OperatorLeaseWatch::LookOnce() {
  const auto fetched =
      client_.Get(core::resources::Leases(), options_.lease_namespace, options_.lease_name);
  std::string outcome;
  std::string detail;
  core::Clock::WallTime::duration alive_for{};
  if (!fetched) {
    outcome = fetched.error().code() == core::ErrorCode::kNotFound ? "missing" : "unreadable";
    detail = fetched.error().ToString();
  } else if (auto lease = core::LeaseFromJson(*fetched); !lease) {
    outcome = "unreadable";
    detail = lease.error().ToString();
  } else {
    alive_for = LeaseHolderAliveFor(*lease, clock_.WallNow(), options_.clock_skew);
    outcome = alive_for > alive_for.zero() ? "alive" : "stale";
    detail = lease->holder_identity;
  }
  const bool alive = alive_for > alive_for.zero();
  if (alive) {
    admission_.SetOperatorAliveUntil(
        clock_.Now() + std::chrono::duration_cast<core::Clock::SteadyTime::duration>(alive_for));
  }
  if (outcome != last_outcome_) {
    last_outcome_ = outcome;
    const auto lease = core::api::ObjectKey(options_.lease_namespace, options_.lease_name);
    if (outcome == "alive" || outcome == "stale") {
      logger_.Info("operator_lease_seen",
                   {{"lease", lease}, {"operator", outcome}, {"holder", detail}});
    } else {
      // Without the Lease a staging waits only startGrace for its grant: followers of a slow
      // operator may then read the origin.
      logger_.Warn("operator_lease_unavailable",
                   {{"lease", lease},
                    {"outcome", outcome},
                    {"error", detail},
                    {"fix", "check admission.operatorLease and the agent's RBAC (get leases)"}});
    }
  }
  return alive;
}

void OperatorLeaseWatch::Run() {
  (void)LookOnce();
  while (stop_.SleepFor(clock_, options_.poll_interval)) {
    if (admission_.AwaitingFirstGrant()) (void)LookOnce();
  }
}

}  // namespace modelplane::agent
