// How links share their capacity among the flows that cross them: the fluid model of the
// simulation's data plane (rollout_simulation.h). A flow is a set of parallel streams from one
// place to another (a node's range requests to one peer or origin); a link is anything with a
// byte rate that flows share (a NIC's uplink or downlink, a disk, an origin's aggregate cap).
//
// The allocation is weighted and work-conserving, close to max-min fair: every flow first gets
// its weight's share of each link it crosses (the smallest of them), then every flow is scaled
// up by the headroom its tightest link has left, a few times over. Each scaling keeps every link
// within its capacity (a flow grows by at most the factor its most loaded link allows), and
// after it every flow has a link that is full or has reached its own cap. It is within a few
// percent of the exact max-min rates in the shapes a rollout makes (flow_sharing_test.cc) at
// O(flows x links per flow) per round, where exact progressive filling costs a pass per
// bottleneck.
// Thread safety: a pure function.
#pragma once

#include <array>
#include <limits>
#include <span>

namespace modelplane::simulation {

inline constexpr int kNoLink = -1;

struct Flow {
  std::array<int, 5> links{kNoLink, kNoLink, kNoLink, kNoLink, kNoLink};  // into capacities
  double weight = 1;                                     // streams: a link's share goes by weight
  double cap = std::numeric_limits<double>::infinity();  // the flow's own ceiling, bytes/s
  double rate = 0;                                       // out: bytes/s
};

// Sets every flow's rate. `capacities` are bytes/s, each at least 0.
void ShareLinks(std::span<const double> capacities, std::span<Flow> flows);

}  // namespace modelplane::simulation
