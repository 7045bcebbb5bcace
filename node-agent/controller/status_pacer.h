// When the agent writes its ModelCache status. At fleet scale the status writes of every node
// reach the operator and the extender, so progress is paced and everything else is not:
//   - a change beyond progress (a state, a reason, a revision added or gone, a new peer
//     endpoint) is written at once;
//   - while only progress moves (bytes done, bytes by tier, space counts, telemetry, and the
//     spec generation observed: the operator rewrites peers and holdings as the fleet stages,
//     and echoing each of those at once doubled the status writes of hollow agents), at most
//     once per progress interval (the operator's spec.progressIntervalSeconds, at least the
//     agent's own status interval);
//   - a status another writer replaced (a kubectl edit, a restore from backup) is written again:
//     at once when the stored object's resourceVersion is later than the one this agent's last
//     write returned (Kubernetes 1.35 orders them, KEP-5504), and while it is earlier the
//     informer simply has not delivered that write yet (under load, watch delivery trails by
//     seconds: taking that for an overwrite made 300 and 1,000 hollow agents write their status
//     about once a second). Where versions cannot be ordered, once the stored status has differed
//     for a status interval.
// The baseline for "replaced" is the server's answer to the last write, so a field the server
// normalizes cannot make every pass write again.
// Thread safety: not thread-safe; the control loop's worker owns it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/clock/clock.h"

namespace modelplane::agent {

class StatusPacer {
 public:
  using Duration = core::Clock::SteadyTime::duration;

  struct Decision {
    bool write = false;
    bool overwritten = false;      // the write repairs a status another writer replaced
    std::optional<Duration> wait;  // not written now: pass again within this
  };

  // `desired`: the status this pass computed; `stored`: the status the informer holds, both in
  // core::api::ToJson's form (null when there is none), and that object's resourceVersion.
  [[nodiscard]] Decision Decide(const nlohmann::json& desired, const nlohmann::json& stored,
                                std::string_view stored_version, core::Clock::SteadyTime now,
                                Duration progress_interval, Duration status_interval);
  // After a write that Decide asked for: `answer` is the status the server holds afterwards and
  // `answer_version` the object's resourceVersion then.
  void Written(const nlohmann::json& desired, nlohmann::json answer, std::string answer_version,
               core::Clock::SteadyTime now);
  // Since when the stored status has differed from the last write (the loop looks again a
  // status interval after it).
  [[nodiscard]] std::optional<core::Clock::SteadyTime> differs_since() const {
    return differs_since_;
  }

  // The status without what moves with progress.
  [[nodiscard]] static nlohmann::json ShapeOf(nlohmann::json status);

 private:
  nlohmann::json last_status_;
  nlohmann::json last_shape_;
  nlohmann::json last_answer_;
  std::string last_answer_version_;
  std::optional<core::Clock::SteadyTime> differs_since_;
  core::Clock::SteadyTime last_write_{};
};

}  // namespace modelplane::agent
