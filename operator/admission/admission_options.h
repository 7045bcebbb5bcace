// How the operator's admission controller runs (admission_controller.h); the operator's config
// file sets it under `admission`.
// Thread safety: a value.
#pragma once

#include <chrono>

namespace modelplane::controller {

struct AdmissionOptions {
  // Off: no budgets and no grants; agents must run with admission off too (the chart sets both
  // from one value), else they wait start_grace and then read at their safe capacity.
  bool enabled = true;
  std::chrono::milliseconds interval{2'000};       // between passes (plans and grants)
  std::chrono::milliseconds step_interval{5'000};  // between budget steps
  std::chrono::seconds grant_ttl{30};
  // A seeder whose staging moved no byte for this long is replaced.
  std::chrono::seconds seeder_stall_timeout{30};
  int wanted_streams = 16;  // what one staging asks of a source (the agents' fetch.inFlight)
};

}  // namespace modelplane::controller
