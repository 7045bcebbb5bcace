#include "core/kube/leader_elector.h"

#include <future>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace modelplane::core {

using nlohmann::json;

std::string FormatMicroTime(Clock::WallTime time) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:06d}Z", utc, micros % 1'000'000);
}

Result<std::unique_ptr<LeaderElector>> LeaderElector::Create(KubeClient& client,
                                                             LeaderElectionOptions options,
                                                             LeaderCallbacks callbacks,
                                                             const Clock& clock) {
  if (options.lease_name.empty() || options.lease_namespace.empty() || options.identity.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "leader election needs a lease namespace, a lease name and an identity");
  }
  if (options.renew_deadline >= options.lease_duration) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "renew deadline must be shorter than the lease duration, or two leaders "
                     "could overlap");
  }
  if (options.retry_period * 12 / 10 >= options.renew_deadline) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "retry period (with 1.2 jitter) must be shorter than the renew deadline");
  }
  if (!callbacks.on_started_leading || !callbacks.on_stopped_leading) {
    return MakeError(ErrorCode::kInvalidArgument, "leader callbacks are required");
  }
  return std::unique_ptr<LeaderElector>(
      new LeaderElector(client, std::move(options), std::move(callbacks), clock));
}

LeaderElector::LeaderElector(KubeClient& client, LeaderElectionOptions options,
                             LeaderCallbacks callbacks, const Clock& clock)
    : client_(client),
      options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      clock_(clock) {}

std::chrono::nanoseconds LeaderElector::Jittered(std::chrono::milliseconds period) {
  // client-go's wait.JitterUntil with factor 1.2: spreads candidates' attempts apart.
  std::uniform_real_distribution<double> factor(1.0, 1.2);
  return std::chrono::nanoseconds(
      static_cast<std::int64_t>(static_cast<double>(period.count()) * 1e6 * factor(random_)));
}

bool LeaderElector::TryAcquireOrRenew() {
  const auto now_wall = clock_.WallNow();
  const auto now = clock_.Now();
  const long long duration_seconds = std::max<long long>(
      1, std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count());
  if (leading_ && RenewLastWrittenLease(now_wall, now)) return Held();
  auto lease = client_.Get(resources::Leases(), options_.lease_namespace, options_.lease_name);
  if (!lease && lease.error().code() == ErrorCode::kNotFound) {
    json fresh = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", options_.lease_name}, {"namespace", options_.lease_namespace}}},
        {"spec",
         {{"holderIdentity", options_.identity},
          {"leaseDurationSeconds", duration_seconds},
          {"acquireTime", FormatMicroTime(now_wall)},
          {"renewTime", FormatMicroTime(now_wall)},
          {"leaseTransitions", 0}}}};
    auto created = client_.Create(resources::Leases(), options_.lease_namespace, fresh);
    if (!created) return Failed("creating the lease failed: " + created.error().ToString());
    ObserveWritten(std::move(*created), now);
    return Held();
  }
  if (!lease) return Failed("reading the lease failed: " + lease.error().ToString());

  const json spec = lease->value("spec", json::object());
  if (spec != observed_spec_) {
    observed_spec_ = spec;
    observed_time_ = now;
  }
  const std::string holder = spec.value("holderIdentity", "");
  const auto held_for = std::chrono::seconds(spec.value("leaseDurationSeconds", 0));
  if (!holder.empty() && holder != options_.identity && observed_time_ + held_for > now) {
    // Someone else holds a lease that has not expired by our clock.
    return Failed("the lease is held by " + holder);
  }

  json updated = *lease;
  json& new_spec = updated["spec"];
  new_spec["holderIdentity"] = options_.identity;
  new_spec["leaseDurationSeconds"] = duration_seconds;
  new_spec["renewTime"] = FormatMicroTime(now_wall);
  if (holder != options_.identity) {
    new_spec["acquireTime"] = FormatMicroTime(now_wall);
    new_spec["leaseTransitions"] = spec.value("leaseTransitions", 0) + 1;
  }
  // The update carries the resourceVersion we read: if another candidate wrote in between,
  // the API server answers Conflict and we have not acquired.
  auto written = client_.Update(resources::Leases(), updated);
  if (!written) return Failed("writing the lease failed: " + written.error().ToString());
  ObserveWritten(std::move(*written), now);
  return Held();
}

bool LeaderElector::RenewLastWrittenLease(Clock::WallTime now_wall, Clock::SteadyTime now) {
  if (!last_written_.is_object()) return false;
  const json& spec = last_written_["spec"];
  const auto held_for = std::chrono::seconds(spec.value("leaseDurationSeconds", 0));
  if (spec.value("holderIdentity", "") != options_.identity || observed_time_ + held_for <= now) {
    return false;  // not ours, or expired by our clock: read the lease first
  }
  json renewed = last_written_;
  renewed["spec"]["renewTime"] = FormatMicroTime(now_wall);
  auto written = client_.Update(resources::Leases(), renewed);
  if (!written) {
    // A conflict means someone else wrote the lease: the read that follows finds out who.
    last_written_ = nullptr;
    return Failed("renewing the lease as last written failed: " + written.error().ToString());
  }
  ObserveWritten(std::move(*written), now);
  return true;
}

void LeaderElector::ObserveWritten(json lease, Clock::SteadyTime now) {
  observed_spec_ = lease.value("spec", json::object());
  observed_time_ = now;
  last_written_ = std::move(lease);
}

bool LeaderElector::Failed(std::string why) {
  const std::lock_guard lock(failure_mutex_);
  last_failure_ = std::move(why);
  return false;
}

bool LeaderElector::Held() {
  const std::lock_guard lock(failure_mutex_);
  last_failure_.clear();
  return true;
}

std::string LeaderElector::LastFailure() const {
  const std::lock_guard lock(failure_mutex_);
  return last_failure_;
}

void LeaderElector::Release() {
  auto lease = client_.Get(resources::Leases(), options_.lease_namespace, options_.lease_name);
  if (!lease ||
      lease->value("spec", json::object()).value("holderIdentity", "") != options_.identity) {
    return;
  }
  json released = *lease;
  released["spec"]["holderIdentity"] = "";
  released["spec"]["leaseDurationSeconds"] = 1;
  released["spec"]["renewTime"] = FormatMicroTime(clock_.WallNow());
  (void)client_.Update(resources::Leases(), released);
}

void LeaderElector::Run() {
  // Campaign until acquired or stopped.
  bool acquired = false;
  while (!stop_.cancelled()) {
    if (TryAcquireOrRenew()) {
      acquired = true;
      break;
    }
    if (const std::string holder = observed_spec_.value("holderIdentity", "");
        callbacks_.on_new_leader && holder != reported_leader_ && !holder.empty()) {
      reported_leader_ = holder;
      callbacks_.on_new_leader(holder);
    }
    if (!stop_.SleepFor(clock_, Jittered(options_.retry_period))) return;
  }
  if (stop_.cancelled()) {
    // A stop that lands just after the acquiring write still hands the lease back: otherwise
    // others would see a live holder for a whole lease duration after we are gone.
    if (acquired && options_.release_on_cancel) Release();
    return;
  }

  leading_ = true;
  if (callbacks_.on_new_leader) callbacks_.on_new_leader(options_.identity);
  CancellationToken leader_work;
  std::thread worker([&] { callbacks_.on_started_leading(leader_work); });

  // Renew until a renewal cannot be made within the renew deadline, or until stopped. Each
  // attempt runs on its own thread and is waited for only until the deadline: a request stuck
  // on a dead API server must not keep us "leading" past the point where others take over.
  auto last_renewed = clock_.Now();
  std::future<bool> attempt;
  std::string lost_because = "stopped";
  while (stop_.SleepFor(
      clock_, std::chrono::duration_cast<std::chrono::nanoseconds>(options_.retry_period))) {
    attempt = std::async(std::launch::async, [this] { return TryAcquireOrRenew(); });
    const auto remaining = last_renewed + options_.renew_deadline - clock_.Now();
    if (attempt.wait_for(remaining) == std::future_status::ready && attempt.get()) {
      last_renewed = clock_.Now();
      continue;
    }
    if (clock_.Now() - last_renewed >= options_.renew_deadline) {
      // No failure since the last renewal: every attempt since then is still in flight.
      const std::string failure = LastFailure();
      lost_because = fmt::format("no renewal within the renew deadline of {} ms; last attempt: {}",
                                 options_.renew_deadline.count(),
                                 failure.empty() ? "still waiting for the API server" : failure);
      break;
    }
  }
  // Stop acting as leader before anything else, so no work happens on an expired lease.
  leading_ = false;
  leader_work.Cancel();
  worker.join();
  callbacks_.on_stopped_leading(lost_because);
  if (attempt.valid()) attempt.wait();  // it uses our members
  if (stop_.cancelled() && options_.release_on_cancel) Release();
}

}  // namespace modelplane::core
