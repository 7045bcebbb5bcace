#include "simulation/flow_sharing.h"

#include <algorithm>
#include <vector>

namespace modelplane::simulation {
namespace {

// Scaling rounds after the first share; each closes most of the gap left by the last, and the
// loop stops early once no flow grows by more than kSettled.
constexpr int kScalingRounds = 8;
constexpr double kSettled = 1.001;

}  // namespace

void ShareLinks(std::span<const double> capacities, std::span<Flow> flows) {
  std::vector<double> weights(capacities.size(), 0.0);
  for (const Flow& flow : flows) {
    for (const int link : flow.links) {
      if (link != kNoLink) weights[static_cast<std::size_t>(link)] += flow.weight;
    }
  }
  for (Flow& flow : flows) {
    double rate = flow.cap;
    for (const int link : flow.links) {
      if (link == kNoLink) continue;
      const auto index = static_cast<std::size_t>(link);
      rate = std::min(rate, capacities[index] * flow.weight / weights[index]);
    }
    flow.rate = flow.weight > 0 ? rate : 0;
  }
  std::vector<double> loads(capacities.size());
  for (int round = 0; round < kScalingRounds; ++round) {
    std::fill(loads.begin(), loads.end(), 0.0);
    for (const Flow& flow : flows) {
      for (const int link : flow.links) {
        if (link != kNoLink) loads[static_cast<std::size_t>(link)] += flow.rate;
      }
    }
    double largest_growth = 1;
    for (Flow& flow : flows) {
      if (flow.rate <= 0) continue;
      double growth = flow.cap / flow.rate;
      for (const int link : flow.links) {
        if (link == kNoLink) continue;
        const auto index = static_cast<std::size_t>(link);
        growth = std::min(growth, capacities[index] / loads[index]);
      }
      if (growth > 1) {
        flow.rate *= growth;
        largest_growth = std::max(largest_growth, growth);
      }
    }
    if (largest_growth < kSettled) break;
  }
}

}  // namespace modelplane::simulation
