// OperatorLeaseWatch against the real API server and the operator's own leader election
// (core::LeaderElector): a Lease held and renewed shows the operator alive, a released one and
// a missing one do not, and the log says which.
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/kube/leader_elector.h"
#include "node-agent/controller/operator_lease_watch.h"
#include "tests/core/kube/cluster/cluster_fixture.h"

namespace modelplane::agent {
namespace {

using std::chrono::milliseconds;

constexpr char kLeaseName[] = "modelplane-operator";

class OperatorLeaseWatchClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto logger = core::Logger::Create(
        {.component = "lease-watch-test", .sink = core::LogSink::Stream(log_)});
    ASSERT_TRUE(logger) << logger.error().ToString();
    logger_.emplace(std::move(*logger));
    watch_.emplace(*client_, admission_, *logger_, clock_,
                   OperatorLeaseWatchOptions{.lease_namespace = namespace_,
                                             .lease_name = kLeaseName,
                                             .poll_interval = milliseconds(500)});
  }

  // Runs the operator's leader election in this process until `stop` is called.
  std::unique_ptr<core::LeaderElector> Elect() {
    auto elector =
        core::LeaderElector::Create(*client_,
                                    {.lease_namespace = namespace_,
                                     .lease_name = kLeaseName,
                                     .identity = "operator-under-test",
                                     .lease_duration = milliseconds(4000),
                                     .renew_deadline = milliseconds(3000),
                                     .retry_period = milliseconds(500)},
                                    {.on_started_leading =
                                         [this](core::CancellationToken& stop) {
                                           (void)stop.SleepFor(clock_, std::chrono::hours(1));
                                         },
                                     .on_stopped_leading = [](const std::string&) {}},
                                    clock_);
    EXPECT_TRUE(elector) << elector.error().ToString();
    return elector ? std::move(*elector) : nullptr;
  }

  std::ostringstream log_;
  std::optional<core::Logger> logger_;
  SourceAdmission admission_{clock_, {}};
  std::optional<OperatorLeaseWatch> watch_;
};

TEST_F(OperatorLeaseWatchClusterTest, AMissingLeaseShowsNoOperator) {
  EXPECT_FALSE(watch_->LookOnce());
  EXPECT_NE(log_.str().find("operator_lease_unavailable"), std::string::npos) << log_.str();
  EXPECT_NE(log_.str().find("outcome=missing"), std::string::npos) << log_.str();
}

TEST_F(OperatorLeaseWatchClusterTest, ALeaseTheOperatorRenewsShowsItAliveUntilItLetsGo) {
  auto elector = Elect();
  ASSERT_NE(elector, nullptr);
  std::thread campaign([&] { elector->Run(); });
  bool alive = false;
  for (int attempt = 0; attempt < 100 && !alive; ++attempt) {
    alive = watch_->LookOnce();
    if (!alive) std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(alive) << log_.str();
  EXPECT_NE(log_.str().find("operator=alive"), std::string::npos) << log_.str();
  // A clean stop releases the lease (no holder): the operator is gone at once.
  elector->Stop();
  campaign.join();
  EXPECT_FALSE(watch_->LookOnce());
  EXPECT_NE(log_.str().find("operator=stale"), std::string::npos) << log_.str();
}

}  // namespace
}  // namespace modelplane::agent
