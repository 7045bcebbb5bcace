#include "node-agent/fetch/source_admission.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kSource[] = "objectStore/http://s3.local/models";

class SourceAdmissionTest : public ::testing::Test {
 protected:
  core::api::StreamGrant Grant(int streams, seconds ttl = seconds(30)) const {
    return {.source = kSource,
            .streams = streams,
            .expires_at =
                std::chrono::time_point_cast<std::chrono::microseconds>(clock_.WallNow() + ttl)};
  }
  int Admit(SourceAdmission& admission, int tries) const {
    int admitted = 0;
    for (int index = 0; index < tries; ++index) admitted += admission.TryAcquire(kSource) ? 1 : 0;
    return admitted;
  }
  // A staging that waits asks again and again (the fetch engine every few milliseconds).
  void KeepAsking(SourceAdmission& admission, seconds duration) {
    for (seconds waited(0); waited < duration; waited += seconds(1)) {
      EXPECT_FALSE(admission.TryAcquire(kSource)) << "admitted after " << waited.count() << " s";
      clock_.Advance(seconds(1));
    }
  }

  core::ManualClock clock_;
};

TEST_F(SourceAdmissionTest, AGrantBoundsRequestsInFlight) {
  SourceAdmission admission(clock_, {.start_grace = seconds(10)});
  admission.SetGrants({Grant(3)});
  EXPECT_EQ(Admit(admission, 10), 3);
  admission.Release(kSource, RequestOutcome::kOk, 1 << 20, std::nullopt);
  EXPECT_EQ(Admit(admission, 10), 1);
}

TEST_F(SourceAdmissionTest, AZeroGrantAdmitsNothing) {
  SourceAdmission admission(clock_, {});
  admission.SetGrants({Grant(0)});
  EXPECT_EQ(Admit(admission, 5), 0);
  EXPECT_EQ(admission.Limit(kSource), 0);
}

TEST_F(SourceAdmissionTest, BeforeTheFirstGrantItWaitsThenFallsBackToTheSafeCapacity) {
  SourceAdmission admission(clock_, {.safe_streams = 2, .start_grace = seconds(10)});
  EXPECT_EQ(Admit(admission, 5), 0) << "the operator has not named a seeder yet";
  KeepAsking(admission, seconds(10));
  EXPECT_EQ(Admit(admission, 5), 2);
}

TEST_F(SourceAdmissionTest, TheGraceCountsFromTheStagingsFirstRequestNotFromTheAgentsStart) {
  SourceAdmission admission(clock_, {.safe_streams = 2, .start_grace = seconds(10)});
  clock_.Advance(std::chrono::hours(1));  // an agent idle since it started
  EXPECT_EQ(Admit(admission, 5), 0) << "a new staging waits for the operator's grant";
  KeepAsking(admission, seconds(10));
  EXPECT_EQ(Admit(admission, 5), 2);
}

TEST_F(SourceAdmissionTest, AStagingAfterAQuietSpellWaitsForItsGrantAgain) {
  SourceAdmission admission(clock_, {.safe_streams = 2, .start_grace = seconds(10)});
  admission.SetGrants({Grant(4, seconds(30))});
  EXPECT_EQ(Admit(admission, 5), 4);
  for (int index = 0; index < 4; ++index) {
    admission.Release(kSource, RequestOutcome::kOk, 0, std::nullopt);
  }
  admission.SetGrants({});  // the staging finished; the operator took the grants back
  clock_.Advance(std::chrono::minutes(10));
  EXPECT_EQ(Admit(admission, 5), 0) << "the next revision's staging waits for its grant";
}

TEST_F(SourceAdmissionTest, WhileTheOperatorIsAliveAStagingWaitsUpToTheFirstGrantWait) {
  SourceAdmission admission(
      clock_, {.safe_streams = 2, .start_grace = seconds(10), .first_grant_wait = seconds(60)});
  EXPECT_FALSE(admission.AwaitingFirstGrant()) << "no staging asked yet";
  EXPECT_EQ(Admit(admission, 1), 0);
  EXPECT_TRUE(admission.AwaitingFirstGrant());
  admission.SetOperatorAliveUntil(clock_.Now() + std::chrono::hours(1));
  KeepAsking(admission, seconds(60));
  EXPECT_EQ(Admit(admission, 5), 2) << "a slow operator is waited for only so long";
}

TEST_F(SourceAdmissionTest, AnOperatorNotSeenAliveLatelyDoesNotExtendTheWait) {
  SourceAdmission admission(
      clock_, {.safe_streams = 2, .start_grace = seconds(10), .first_grant_wait = seconds(60)});
  admission.SetOperatorAliveUntil(clock_.Now() + seconds(4));  // its last renewal, then nothing
  KeepAsking(admission, seconds(10));
  EXPECT_EQ(Admit(admission, 5), 2);
}

TEST_F(SourceAdmissionTest, ItAwaitsAFirstGrantOnlyWhileAStagingAsksAndNoGrantIsValid) {
  SourceAdmission admission(clock_, {});
  EXPECT_EQ(Admit(admission, 1), 0);
  EXPECT_TRUE(admission.AwaitingFirstGrant());
  core::api::StreamGrant other = Grant(4);
  other.source = "http/https://origin.example";
  admission.SetGrants({other});
  EXPECT_FALSE(admission.AwaitingFirstGrant()) << "the operator is granting: it is alive";
  admission.SetGrants({});
  clock_.Advance(seconds(6));
  EXPECT_FALSE(admission.AwaitingFirstGrant()) << "no staging has asked for a while";
}

TEST_F(SourceAdmissionTest, AnExpiredGrantFallsBackToTheSafeCapacity) {
  SourceAdmission admission(clock_, {.safe_streams = 2});
  admission.SetGrants({Grant(8, seconds(5))});
  EXPECT_EQ(Admit(admission, 10), 8);
  for (int index = 0; index < 8; ++index) {
    admission.Release(kSource, RequestOutcome::kOk, 0, std::nullopt);
  }
  clock_.Advance(seconds(6));  // the operator is gone
  EXPECT_EQ(Admit(admission, 10), 2);
}

TEST_F(SourceAdmissionTest, AFollowerWaitsForItsPeersPastItsGrantBeforeItFallsBack) {
  SourceAdmission admission(clock_, {.safe_streams = 2, .follower_grace = seconds(60)});
  admission.SetGrants({Grant(0, seconds(5))});
  clock_.Advance(seconds(30));  // the operator is slow or gone
  EXPECT_EQ(Admit(admission, 5), 0) << "a follower keeps reading from its peers";
  clock_.Advance(seconds(40));
  EXPECT_EQ(Admit(admission, 5), 2);
}

TEST_F(SourceAdmissionTest, ASeederGoesOnAtNoMoreThanTheSafeCapacityWhenItsGrantLapses) {
  SourceAdmission admission(clock_, {.safe_streams = 2});
  admission.SetGrants({Grant(1, seconds(5))});
  clock_.Advance(seconds(6));
  EXPECT_EQ(admission.Limit(kSource), 1);
}

TEST_F(SourceAdmissionTest, ASourceTheGrantsLeaveOutWaitsWhileOthersAreGranted) {
  SourceAdmission admission(clock_, {.start_grace = seconds(0)});
  core::api::StreamGrant other = Grant(4);
  other.source = "http/https://origin.example";
  admission.SetGrants({other});
  EXPECT_EQ(Admit(admission, 3), 0);
}

TEST_F(SourceAdmissionTest, ThrottlingShrinksTheWindowAndSuccessesGrowItBack) {
  SourceAdmission admission(clock_, {});
  admission.SetGrants({Grant(10)});
  ASSERT_EQ(admission.Limit(kSource), 10);
  ASSERT_TRUE(admission.TryAcquire(kSource));
  admission.Release(kSource, RequestOutcome::kThrottled, 0, std::nullopt);
  EXPECT_EQ(admission.Limit(kSource), 7);
  for (int index = 0; index < 40; ++index) {
    ASSERT_TRUE(admission.TryAcquire(kSource));
    admission.Release(kSource, RequestOutcome::kOk, 0, std::nullopt);
  }
  EXPECT_EQ(admission.Limit(kSource), 10) << "never past the grant";
}

TEST_F(SourceAdmissionTest, RetryAfterPausesTheSource) {
  SourceAdmission admission(clock_, {});
  admission.SetGrants({Grant(4)});
  ASSERT_TRUE(admission.TryAcquire(kSource));
  admission.Release(kSource, RequestOutcome::kThrottled, 0, milliseconds(2000));
  EXPECT_FALSE(admission.TryAcquire(kSource));
  clock_.Advance(milliseconds(2001));
  EXPECT_TRUE(admission.TryAcquire(kSource));
}

TEST_F(SourceAdmissionTest, AByteRateSpacesRequestStarts) {
  SourceAdmission admission(clock_, {});
  core::api::StreamGrant grant = Grant(4);
  grant.bytes_per_second = 1 << 20;
  admission.SetGrants({grant});
  ASSERT_TRUE(admission.TryAcquire(kSource));
  admission.Release(kSource, RequestOutcome::kOk, 2 << 20, std::nullopt);  // two seconds' worth
  EXPECT_FALSE(admission.TryAcquire(kSource));
  clock_.Advance(milliseconds(1900));
  EXPECT_FALSE(admission.TryAcquire(kSource));
  clock_.Advance(milliseconds(200));
  EXPECT_TRUE(admission.TryAcquire(kSource));
}

TEST_F(SourceAdmissionTest, DisabledAdmissionLimitsNothing) {
  SourceAdmission admission(clock_, {.enabled = false});
  EXPECT_EQ(Admit(admission, 100), 100);
  EXPECT_EQ(admission.Limit(kSource), SourceAdmission::kUnlimited);
}

}  // namespace
}  // namespace modelplane::agent
