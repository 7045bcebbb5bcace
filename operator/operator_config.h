// modelplane-operator's configuration file (see charts/modelplane for the deployed one).
#pragma once

#include <chrono>
#include <string>

#include "core/config/config_map.h"
#include "core/runtime/runtime_config.h"

namespace modelplane::controller {

struct LeaderElectionConfig {
  bool enabled = true;
  std::string namespace_name = "modelplane-system";
  std::string lease_name = "modelplane-operator";
  std::chrono::milliseconds lease_duration{15'000};
  std::chrono::milliseconds renew_deadline{10'000};
  std::chrono::milliseconds retry_period{2'000};
};

// The controllers the leader runs.
struct ControllersConfig {
  std::string namespace_name;  // ModelRevisions watched; "" = every namespace
  std::chrono::seconds resync_period{300};
  int revision_workers = 4;
  int cache_workers = 2;
};

struct OperatorConfig {
  core::AdminConfig admin;
  core::LogConfig log;
  core::KubernetesConfig kubernetes;
  LeaderElectionConfig leader_election;
  ControllersConfig controllers;
};

void BindConfig(core::ConfigMap& map, LeaderElectionConfig& config);
void BindConfig(core::ConfigMap& map, ControllersConfig& config);
void BindConfig(core::ConfigMap& map, OperatorConfig& config);

}  // namespace modelplane::controller
