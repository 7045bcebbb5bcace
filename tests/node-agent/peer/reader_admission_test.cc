#include "node-agent/peer/reader_admission.h"

#include <chrono>

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using namespace std::chrono_literals;

TEST(ReaderAdmissionTest, ServesItsReadersToCompletionAndTurnsNewOnesAway) {
  core::ManualClock clock;
  ReaderAdmission admission(2, 2s, clock);
  ASSERT_TRUE(admission.TryAdmit("a"));
  ASSERT_TRUE(admission.TryAdmit("b"));
  EXPECT_FALSE(admission.TryAdmit("c"));  // full
  EXPECT_TRUE(admission.TryAdmit("a"));   // a reader with a place gets more streams
  EXPECT_EQ(admission.readers(), 2u);
  admission.Finished("a");
  admission.Finished("a");
  // Between two of its ranges a reader keeps its place.
  clock.Advance(1s);
  EXPECT_FALSE(admission.TryAdmit("c"));
  EXPECT_TRUE(admission.TryAdmit("a"));
  admission.Finished("a");
  // Once it stopped asking for `keep`, its place is free.
  clock.Advance(2s);
  EXPECT_TRUE(admission.TryAdmit("c"));
  EXPECT_FALSE(admission.TryAdmit("a"));
  EXPECT_EQ(admission.readers(), 2u);
}

TEST(ReaderAdmissionTest, AReaderWithABodyInFlightNeverExpires) {
  core::ManualClock clock;
  ReaderAdmission admission(1, 2s, clock);
  ASSERT_TRUE(admission.TryAdmit("slow"));
  clock.Advance(1h);  // one long body
  EXPECT_FALSE(admission.TryAdmit("other"));
  admission.Finished("slow");
  clock.Advance(2s);
  EXPECT_TRUE(admission.TryAdmit("other"));
}

TEST(ReaderAdmissionTest, NoLimitAdmitsEveryone) {
  core::ManualClock clock;
  ReaderAdmission admission(0, 2s, clock);
  for (int reader = 0; reader < 100; ++reader) {
    EXPECT_TRUE(admission.TryAdmit("r" + std::to_string(reader)));
  }
  EXPECT_EQ(admission.readers(), 100u);
}

TEST(ReaderAdmissionTest, AnUnknownReadersFinishIsIgnored) {
  core::ManualClock clock;
  ReaderAdmission admission(1, 2s, clock);
  admission.Finished("never-admitted");
  EXPECT_EQ(admission.readers(), 0u);
  EXPECT_TRUE(admission.TryAdmit("x"));
}

TEST(ReaderOfTest, ACertificateNamesTheReaderElseItsAddress) {
  const std::string subject = "CN=node-7,O=modelplane";
  EXPECT_EQ(ReaderOf("10.0.0.7:41000", &subject), "certificate:CN=node-7,O=modelplane");
  EXPECT_EQ(ReaderOf("10.0.0.7:41000", nullptr), "10.0.0.7");
  EXPECT_EQ(ReaderOf("[fd00::7]:41000", nullptr), "[fd00::7]");
  EXPECT_EQ(ReaderOf("[fd00::7]", nullptr), "[fd00::7]");
  EXPECT_EQ(ReaderOf("somewhere", nullptr), "somewhere");
}

}  // namespace
}  // namespace modelplane::agent
