#include "node-agent/controller/status_pacer.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using nlohmann::json;
using std::chrono::seconds;

json Status(const std::string& state, std::int64_t bytes_done) {
  return {{"usedBytes", bytes_done},
          {"revisions", {{{"digest", "sha256:aa"}, {"state", state}, {"bytesDone", bytes_done}}}}};
}

class StatusPacerTest : public ::testing::Test {
 protected:
  // Decide, and when it says write, write (the server answering with what it was sent).
  StatusPacer::Decision Pass(const json& desired) {
    const StatusPacer::Decision decision =
        pacer_.Decide(desired, stored_, stored_version_, clock_.Now(), progress_, seconds(1));
    if (decision.write) {
      version_ += 1;
      pacer_.Written(desired, desired, std::to_string(version_), clock_.Now());
      if (informer_delivers_) {
        stored_ = desired;
        stored_version_ = std::to_string(version_);
      }
      ++writes_;
    }
    return decision;
  }

  core::ManualClock clock_;
  StatusPacer pacer_;
  json stored_;
  std::string stored_version_;
  int version_ = 100;
  bool informer_delivers_ = true;  // the informer sees each write before the next pass
  std::chrono::nanoseconds progress_ = seconds(32);
  int writes_ = 0;
};

TEST_F(StatusPacerTest, ProgressAloneWaitsForTheProgressIntervalAndStateChangesDoNot) {
  EXPECT_TRUE(Pass(Status("Staging", 0)).write);
  // Bytes move every second: written once per progress interval, the loop passing every second.
  for (int second = 1; second < 32; ++second) {
    clock_.Advance(seconds(1));
    const auto decision = Pass(Status("Staging", second));
    EXPECT_FALSE(decision.write) << second;
    ASSERT_TRUE(decision.wait) << second;
    EXPECT_EQ(*decision.wait, seconds(1));
  }
  clock_.Advance(seconds(1));
  EXPECT_TRUE(Pass(Status("Staging", 32)).write);
  EXPECT_EQ(writes_, 2);
  // Ready is written at once, whatever the interval says.
  clock_.Advance(seconds(1));
  EXPECT_TRUE(Pass(Status("Ready", 40)).write);
  // Nothing changed: nothing written, nothing to wait for.
  const auto idle = Pass(Status("Ready", 40));
  EXPECT_FALSE(idle.write);
  EXPECT_FALSE(idle.wait);
  EXPECT_EQ(writes_, 3);
}

TEST_F(StatusPacerTest, TheWaitIsWhatIsLeftOfTheIntervalWhenThatIsShorterThanAPass) {
  progress_ = seconds(2);
  ASSERT_TRUE(Pass(Status("Staging", 0)).write);
  clock_.Advance(std::chrono::milliseconds(1500));
  const auto decision = Pass(Status("Staging", 1));
  ASSERT_TRUE(decision.wait);
  EXPECT_EQ(*decision.wait, std::chrono::milliseconds(500));
}

TEST_F(StatusPacerTest, AStatusAnotherWriterReplacedIsWrittenAgainAtOnce) {
  ASSERT_TRUE(Pass(Status("Ready", 10)).write);
  // A kubectl edit: a later resourceVersion with another status.
  stored_ = json{{"revisions", json::array()}};
  stored_version_ = "150";
  const auto decision = Pass(Status("Ready", 10));
  EXPECT_TRUE(decision.write);
  EXPECT_TRUE(decision.overwritten);
  EXPECT_FALSE(pacer_.differs_since());
}

TEST_F(StatusPacerTest, AnInformerThatTrailsTheAgentsOwnWritesIsNoOverwrite) {
  informer_delivers_ = false;  // watch delivery seconds behind, as under load
  ASSERT_TRUE(Pass(Status("Staging", 0)).write);
  stored_ = Status("Pending", 0);  // what the informer had before that write
  stored_version_ = "90";
  for (int second = 0; second < 10; ++second) {
    clock_.Advance(seconds(1));
    const auto decision = Pass(Status("Staging", second));
    EXPECT_FALSE(decision.write) << second;
    EXPECT_FALSE(pacer_.differs_since()) << second;
  }
  EXPECT_EQ(writes_, 1);
}

TEST_F(StatusPacerTest, UnorderedVersionsFallBackToALastingDifference) {
  ASSERT_TRUE(Pass(Status("Ready", 10)).write);
  stored_ = json{{"revisions", json::array()}};
  stored_version_ = "not-a-number";  // a server before KEP-5504 may hand out any string
  auto decision = Pass(Status("Ready", 10));
  EXPECT_FALSE(decision.write);
  ASSERT_TRUE(pacer_.differs_since());
  clock_.Advance(seconds(1));
  decision = Pass(Status("Ready", 10));
  EXPECT_TRUE(decision.write);
  EXPECT_TRUE(decision.overwritten);
}

TEST_F(StatusPacerTest, TheShapeLeavesOutOnlyWhatMovesWithProgress) {
  const json shape = StatusPacer::ShapeOf({{"usedBytes", 1},
                                           {"observedGeneration", 7},
                                           {"reservedBytes", 2},
                                           {"reclaimableBytes", 3},
                                           {"protectedBytes", 4},
                                           {"sources", json::array()},
                                           {"capacityBytes", 9},
                                           {"revisions",
                                            {{{"digest", "d"},
                                              {"state", "Staging"},
                                              {"bytesDone", 1},
                                              {"bytesByTier", {{"peer", 1}}},
                                              {"uniqueBytes", 1},
                                              {"reason", "r"}}}}});
  EXPECT_EQ(shape,
            (json{{"capacityBytes", 9},
                  {"revisions", {{{"digest", "d"}, {"state", "Staging"}, {"reason", "r"}}}}}));
}

}  // namespace
}  // namespace modelplane::agent
