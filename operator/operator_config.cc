#include "operator/operator_config.h"

namespace modelplane::controller {

using namespace std::chrono_literals;

void BindConfig(core::ConfigMap& map, LeaderElectionConfig& config) {
  map.Optional("enabled", config.enabled);
  map.Optional("namespace", config.namespace_name);
  map.Optional("leaseName", config.lease_name);
  map.Optional("leaseDuration", config.lease_duration, core::InRange(1s, 10min));
  map.Optional("renewDeadline", config.renew_deadline, core::InRange(500ms, 10min));
  map.Optional("retryPeriod", config.retry_period, core::InRange(100ms, 1min));
  if (config.renew_deadline >= config.lease_duration) {
    map.Fail("renewDeadline must be shorter than leaseDuration");
  }
}

void BindConfig(core::ConfigMap& map, OperatorConfig& config) {
  map.Optional("admin", config.admin);
  map.Optional("log", config.log);
  map.Optional("kubernetes", config.kubernetes);
  map.Optional("leaderElection", config.leader_election);
}

}  // namespace modelplane::controller
