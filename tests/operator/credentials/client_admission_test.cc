#include "operator/credentials/client_admission.h"

#include <optional>
#include <vector>

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using Verdict = ClientAdmission::Verdict;

TEST(ClientAdmissionTest, OneClientCannotTakeEveryPlace) {
  ClientAdmission admission(/*max_in_flight=*/3, /*max_per_client=*/1);
  const ClientAdmission::Ticket flooder = admission.Enter("10.0.0.9:40001");
  ASSERT_EQ(flooder.verdict(), Verdict::kAdmitted);
  // The same address on other connections (ports) waits its turn...
  for (int port = 40002; port < 40012; ++port) {
    EXPECT_EQ(admission.Enter("10.0.0.9:" + std::to_string(port)).verdict(), Verdict::kClientBusy);
  }
  // ... and the agents on other addresses still get in.
  const ClientAdmission::Ticket agent_a = admission.Enter("10.0.1.1:50000");
  const ClientAdmission::Ticket agent_b = admission.Enter("fd00::2:50000");
  EXPECT_EQ(agent_a.verdict(), Verdict::kAdmitted);
  EXPECT_EQ(agent_b.verdict(), Verdict::kAdmitted);
  // All places taken: anyone else is told the endpoint is busy.
  EXPECT_EQ(admission.Enter("10.0.1.3:50000").verdict(), Verdict::kBusy);
}

TEST(ClientAdmissionTest, APlaceIsFreedWhenItsTicketEnds) {
  ClientAdmission admission(/*max_in_flight=*/1, /*max_per_client=*/1);
  {
    const ClientAdmission::Ticket first = admission.Enter("10.0.0.9:1");
    ASSERT_EQ(first.verdict(), Verdict::kAdmitted);
    EXPECT_EQ(admission.Enter("10.0.0.8:1").verdict(), Verdict::kBusy);
  }
  EXPECT_EQ(admission.Enter("10.0.0.9:2").verdict(), Verdict::kAdmitted);
  // A moved ticket releases its place once, whoever holds it last.
  std::optional<ClientAdmission::Ticket> moved;
  {
    ClientAdmission::Ticket original = admission.Enter("10.0.0.7:1");
    ASSERT_EQ(original.verdict(), Verdict::kAdmitted);
    moved.emplace(std::move(original));
  }
  EXPECT_EQ(admission.Enter("10.0.0.6:1").verdict(), Verdict::kBusy);
  moved.reset();
  EXPECT_EQ(admission.Enter("10.0.0.6:1").verdict(), Verdict::kAdmitted);
}

TEST(ClientAdmissionTest, TheClientIsTheAddressWithoutThePort) {
  EXPECT_EQ(ClientAdmission::ClientAddress("10.0.0.9:40001"), "10.0.0.9");
  EXPECT_EQ(ClientAdmission::ClientAddress("fd00::2:443"), "fd00::2");
  EXPECT_EQ(ClientAdmission::ClientAddress("unix"), "unix");
}

}  // namespace
}  // namespace modelplane::controller
