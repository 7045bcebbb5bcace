#include "simulation/flow_sharing.h"

#include <vector>

#include <gtest/gtest.h>

namespace modelplane::simulation {
namespace {

Flow Through(std::initializer_list<int> links, double weight = 1) {
  Flow flow{.weight = weight};
  std::size_t slot = 0;
  for (const int link : links) flow.links[slot++] = link;
  return flow;
}

TEST(FlowSharingTest, OneLinkIsSharedByWeight) {
  const std::vector<double> capacities{90};
  std::vector<Flow> flows{Through({0}, 1), Through({0}, 2)};
  ShareLinks(capacities, flows);
  EXPECT_DOUBLE_EQ(flows[0].rate, 30);
  EXPECT_DOUBLE_EQ(flows[1].rate, 60);
}

TEST(FlowSharingTest, WhatABottleneckedFlowLeavesGoesToTheOthers) {
  // Max-min: the flow through the 1 B/s link gets 1; the other takes the remaining 9.
  const std::vector<double> capacities{10, 1};
  std::vector<Flow> flows{Through({0}), Through({0, 1})};
  ShareLinks(capacities, flows);
  EXPECT_NEAR(flows[1].rate, 1, 1e-9);
  EXPECT_NEAR(flows[0].rate, 9, 0.05);
}

TEST(FlowSharingTest, AFlowsOwnCapHoldsAndItsShareGoesToOthers) {
  const std::vector<double> capacities{100};
  std::vector<Flow> flows{Through({0}), Through({0})};
  flows[0].cap = 10;
  ShareLinks(capacities, flows);
  EXPECT_DOUBLE_EQ(flows[0].rate, 10);
  EXPECT_NEAR(flows[1].rate, 90, 0.5);
}

TEST(FlowSharingTest, NoLinkIsEverOverCapacity) {
  // A fan-out's shape: one uplink feeds many downlinks, some of them shared with a second
  // uplink, with a common host cap over all of it.
  const int senders = 2;
  const int receivers = 40;
  std::vector<double> capacities;
  capacities.reserve(senders + receivers + 1);
  for (int sender = 0; sender < senders; ++sender) capacities.push_back(100 + 50 * sender);
  for (int receiver = 0; receiver < receivers; ++receiver) capacities.push_back(7 + receiver % 5);
  capacities.push_back(180);  // the host
  const int host = static_cast<int>(capacities.size()) - 1;
  std::vector<Flow> flows;
  flows.reserve(2 * receivers);
  for (int receiver = 0; receiver < receivers; ++receiver) {
    flows.push_back(Through({0, senders + receiver, host}, 1 + receiver % 3));
    if (receiver % 2 == 0) flows.push_back(Through({1, senders + receiver, host}, 2));
  }
  ShareLinks(capacities, flows);
  std::vector<double> loads(capacities.size(), 0.0);
  double total = 0;
  for (const Flow& flow : flows) {
    EXPECT_GE(flow.rate, 0);
    total += flow.rate;
    for (const int link : flow.links) {
      if (link != kNoLink) loads[static_cast<std::size_t>(link)] += flow.rate;
    }
  }
  for (std::size_t link = 0; link < capacities.size(); ++link) {
    EXPECT_LE(loads[link], capacities[link] * (1 + 1e-9)) << "link " << link;
  }
  // Work-conserving: the host cap binds (the receivers could take 360).
  EXPECT_NEAR(total, 180, 1.0);
}

TEST(FlowSharingTest, AFlowWithNoWeightGetsNothing) {
  const std::vector<double> capacities{10};
  std::vector<Flow> flows{Through({0}, 0), Through({0}, 1)};
  ShareLinks(capacities, flows);
  EXPECT_EQ(flows[0].rate, 0);
  EXPECT_NEAR(flows[1].rate, 10, 1e-9);
}

}  // namespace
}  // namespace modelplane::simulation
