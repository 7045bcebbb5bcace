// Leader election on the real API server. Between two real processes: never two leaders at
// once, takeover after kill -9 within the lease (plus retry periods), and an immediate
// takeover after a clean release. In-process: a stop that arrives with the acquiring write
// still releases, the end of leading says why (stopped, or which renewals failed), and a leader
// renews with one write per renewal, reading the lease only after someone else wrote it.
#include <atomic>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/kube/leader_elector.h"
#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/core/kube/forwarding_kube_client.h"
#include "tests/support/child_process.h"

namespace modelplane::core::testing {
namespace {

using ::modelplane::testing::ChildProcess;

constexpr long long kLeaseMs = 4000;
constexpr long long kRenewMs = 3000;
constexpr long long kRetryMs = 1000;
constexpr long long kMillis = 1'000'000;

long long Now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Candidate {
  std::string identity;
  std::string log;
  ChildProcess process;
  std::optional<long long> killed_at;
};

std::vector<std::pair<std::string, long long>> ReadLog(const std::string& path) {
  std::vector<std::pair<std::string, long long>> entries;
  std::ifstream in(path);
  std::string what;
  long long when = 0;
  while (in >> what >> when) entries.emplace_back(what, when);
  return entries;
}

std::optional<long long> LastStarted(const Candidate& candidate) {
  std::optional<long long> started;
  for (const auto& [what, when] : ReadLog(candidate.log)) {
    if (what == "started") started = when;
  }
  return started;
}

class LeaderElectionTest : public ClusterTest {
 protected:
  void TearDown() override {
    for (auto& candidate : candidates_) {
      candidate.process.Stop(SIGKILL);
      // Kept for a failed test's diagnosis; otherwise every run left them in /tmp.
      if (!HasFailure()) ::unlink(candidate.log.c_str());
    }
    ClusterTest::TearDown();
  }

  Candidate& Launch(const std::string& identity) {
    Candidate candidate{identity, "/tmp/" + namespace_ + "-" + identity + ".log"};
    ::unlink(candidate.log.c_str());
    const std::string probe =
        std::string(MODELPLANE_BINARY_DIR) + "/tests/core/kube/cluster/leader_election_probe";
    // No log file: the probe writes its events to --log itself, and its output stays the test's.
    auto process = ChildProcess::Start(
        {probe, "--kubeconfig", kubeconfig_path_, "--namespace", namespace_, "--lease", "leader",
         "--identity", identity, "--log", candidate.log, "--lease-ms", std::to_string(kLeaseMs),
         "--renew-ms", std::to_string(kRenewMs), "--retry-ms", std::to_string(kRetryMs)});
    EXPECT_TRUE(process) << process.error().ToString();
    if (process) candidate.process = std::move(*process);
    candidates_.push_back(std::move(candidate));
    return candidates_.back();
  }

  static void Kill(Candidate& candidate, int signal) {
    if (signal == SIGKILL) candidate.killed_at = Now();
    candidate.process.Stop(signal);
  }

  // Every candidate's leadership intervals, [started, stopped or killed).
  void ExpectNoOverlap() {
    std::vector<std::pair<long long, long long>> intervals;
    for (const auto& candidate : candidates_) {
      long long open = -1;  // start of the interval being read, -1 when none
      for (const auto& [what, when] : ReadLog(candidate.log)) {
        if (what == "started") open = when;
        if (what == "stopped" && open >= 0) {
          intervals.emplace_back(open, when);
          open = -1;
        }
      }
      if (open >= 0) intervals.emplace_back(open, candidate.killed_at.value_or(Now()));
    }
    std::sort(intervals.begin(), intervals.end());
    for (std::size_t i = 1; i < intervals.size(); ++i) {
      EXPECT_LE(intervals[i - 1].second, intervals[i].first)
          << "two leaders at once for " << (intervals[i - 1].second - intervals[i].first) / kMillis
          << " ms";
    }
  }

  std::vector<Candidate> candidates_;
};

TEST_F(LeaderElectionTest, OneLeaderTakeoverAfterCrashAndAfterRelease) {
  candidates_.reserve(4);
  Candidate& first = Launch("first");
  ASSERT_TRUE(WaitUntil([&] { return LastStarted(first).has_value(); }, std::chrono::seconds(20)));
  Candidate& second = Launch("second");
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kRetryMs));
  EXPECT_FALSE(LastStarted(second).has_value()) << "a held lease must not be taken";

  // Crash the leader: the standby takes over once the lease expires by its own clock. It saw
  // the last renewal up to one jittered retry after it happened, and polls once per jittered
  // retry, so the bound is lease + 2 x 1.2 retry; plus a second for API latency on CI.
  Kill(first, SIGKILL);
  const long long bound = (kLeaseMs + 24 * kRetryMs / 10 + 1000) * kMillis;
  ASSERT_TRUE(WaitUntil([&] { return LastStarted(second).has_value(); },
                        std::chrono::milliseconds(kLeaseMs * 4)));
  const long long takeover = *LastStarted(second) - *first.killed_at;
  std::printf("takeover after kill -9: %lld ms (lease %lld ms, retry %lld ms)\n",
              takeover / kMillis, kLeaseMs, kRetryMs);
  EXPECT_LE(takeover, bound);

  // A clean stop releases the lease: the standby needs one retry, not a whole lease.
  Candidate& third = Launch("third");
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * kRetryMs));
  EXPECT_FALSE(LastStarted(third).has_value());
  const long long released_at = Now();
  Kill(second, SIGTERM);
  ASSERT_TRUE(WaitUntil([&] { return LastStarted(third).has_value(); },
                        std::chrono::milliseconds(kLeaseMs * 3)));
  const long long handover = *LastStarted(third) - released_at;
  std::printf("takeover after clean release: %lld ms\n", handover / kMillis);
  EXPECT_LT(handover, (12 * kRetryMs / 10 + 1000) * kMillis);

  auto lease = client_->Get(resources::Leases(), namespace_, "leader");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], "third");
  EXPECT_EQ((*lease)["spec"]["leaseTransitions"], 2);
  ExpectNoOverlap();
}

// The real client; the answer to every Lease write passes through `on_answer`, which may act
// on it (stop the elector as a SIGTERM arriving with that write would) or replace it (an API
// server that stopped answering).
class InterceptLeaseWrites final : public ForwardingKubeClient {
 public:
  using ForwardingKubeClient::ForwardingKubeClient;
  std::function<Result<nlohmann::json>(Result<nlohmann::json>)> on_answer;

  Result<nlohmann::json> Create(const ResourceType& type, const std::string& namespace_name,
                                const nlohmann::json& object) override {
    return on_answer(ForwardingKubeClient::Create(type, namespace_name, object));
  }
  Result<nlohmann::json> Update(const ResourceType& type, const nlohmann::json& object) override {
    return on_answer(ForwardingKubeClient::Update(type, object));
  }
};

// The real client, counting the Lease reads and writes it passes on.
class CountLeaseRequests final : public ForwardingKubeClient {
 public:
  using ForwardingKubeClient::ForwardingKubeClient;
  std::atomic<int> reads = 0;
  std::atomic<int> writes = 0;

  Result<nlohmann::json> Get(const ResourceType& type, const std::string& namespace_name,
                             const std::string& name) override {
    ++reads;
    return ForwardingKubeClient::Get(type, namespace_name, name);
  }
  Result<nlohmann::json> Update(const ResourceType& type, const nlohmann::json& object) override {
    ++writes;
    return ForwardingKubeClient::Update(type, object);
  }
};

// Runs an elector on a thread of its own; ends it (stop, then join) on End or when it goes out
// of scope, so a failed assertion that returns early never leaves a joinable thread behind.
class Campaign {
 public:
  explicit Campaign(LeaderElector& elector)
      : elector_(elector), thread_([&elector] { elector.Run(); }) {}
  Campaign(const Campaign&) = delete;
  Campaign& operator=(const Campaign&) = delete;
  ~Campaign() { End(); }
  void End() {
    if (!thread_.joinable()) return;
    elector_.Stop();
    thread_.join();
  }

 private:
  LeaderElector& elector_;
  std::thread thread_;
};

class LeaderElectorTest : public ClusterTest {
 protected:
  // An elector whose callbacks record into started_ and stopped_because_.
  std::unique_ptr<LeaderElector> Elector(KubeClient& client) {
    auto elector = LeaderElector::Create(
        client,
        {.lease_namespace = namespace_,
         .lease_name = "leader",
         .identity = "in-process",
         .lease_duration = std::chrono::milliseconds(kLeaseMs),
         .renew_deadline = std::chrono::milliseconds(kRenewMs),
         .retry_period = std::chrono::milliseconds(kRetryMs)},
        {.on_started_leading = [this](CancellationToken&) { started_ = true; },
         .on_stopped_leading = [this](const std::string& reason) { stopped_because_ = reason; }},
        clock_);
    EXPECT_TRUE(elector) << elector.error().ToString();
    return elector ? std::move(*elector) : nullptr;
  }

  std::string HolderOfTheLease() {
    auto lease = client_->Get(resources::Leases(), namespace_, "leader");
    EXPECT_TRUE(lease) << lease.error().ToString();
    return lease ? (*lease)["spec"].value("holderIdentity", "") : "";
  }

  std::atomic<bool> started_ = false;
  std::string stopped_because_;
};

TEST_F(LeaderElectorTest, AStopArrivingWithTheAcquiringWriteStillReleasesTheLease) {
  InterceptLeaseWrites client(*client_);
  auto elector = Elector(client);
  ASSERT_NE(elector, nullptr);
  std::atomic<int> writes = 0;
  client.on_answer = [&](Result<nlohmann::json> answer) {
    if (answer && writes++ == 0) elector->Stop();
    return answer;
  };
  elector->Run();

  EXPECT_FALSE(started_) << "a stopped candidate must not start leading";
  EXPECT_EQ(HolderOfTheLease(), "") << "the lease still names the stopped candidate: others "
                                       "would wait a whole lease";
}

TEST_F(LeaderElectorTest, RenewalsTheServerRefusesEndLeadingAndSayWhy) {
  InterceptLeaseWrites client(*client_);
  auto elector = Elector(client);
  ASSERT_NE(elector, nullptr);
  std::atomic<int> writes = 0;
  client.on_answer = [&](Result<nlohmann::json> answer) -> Result<nlohmann::json> {
    if (writes++ == 0) return answer;  // the acquiring write lands
    return MakeError(ErrorCode::kUnavailable, "injected: the API server answered 503");
  };
  elector->Run();  // returns by itself once the renew deadline has passed

  EXPECT_TRUE(started_);
  EXPECT_NE(stopped_because_.find("no renewal within the renew deadline of 3000 ms"),
            std::string::npos)
      << stopped_because_;
  EXPECT_NE(stopped_because_.find("writing the lease failed"), std::string::npos)
      << stopped_because_;
  EXPECT_NE(stopped_because_.find("injected: the API server answered 503"), std::string::npos)
      << stopped_because_;
}

TEST_F(LeaderElectorTest, ALeaderRenewsWithOneWriteAndReadsOnlyAfterSomeoneElseWrote) {
  CountLeaseRequests client(*client_);
  auto elector = Elector(client);
  ASSERT_NE(elector, nullptr);
  Campaign campaign(*elector);
  ASSERT_TRUE(WaitUntil([&] { return started_.load(); }, std::chrono::seconds(20)));
  const int reads_when_leading = client.reads;
  const int writes_when_leading = client.writes;
  ASSERT_TRUE(WaitUntil([&] { return client.writes >= writes_when_leading + 3; },
                        std::chrono::seconds(20)));
  EXPECT_EQ(client.reads, reads_when_leading) << "renewals read the lease before writing it";

  // Another client writes the lease (an annotation): the next renewal from the lease as last
  // written conflicts, and the leader reads it and renews within the same attempt. The
  // leader's own renewal may land between this read and write, so a conflict is read again.
  Result<nlohmann::json> touched = MakeError(ErrorCode::kConflict, "not tried yet");
  for (int attempt = 0; attempt < 10 && !touched && touched.error().code() == ErrorCode::kConflict;
       ++attempt) {
    auto lease = client_->Get(resources::Leases(), namespace_, "leader");
    ASSERT_TRUE(lease) << lease.error().ToString();
    (*lease)["metadata"]["annotations"]["example.com/touched"] = "yes";
    touched = client_->Update(resources::Leases(), *lease);
  }
  ASSERT_TRUE(touched) << touched.error().ToString();
  const int writes_after_touch = client.writes;
  ASSERT_TRUE(
      WaitUntil([&] { return client.writes >= writes_after_touch + 4; }, std::chrono::seconds(20)));
  EXPECT_GE(client.reads, reads_when_leading + 1);
  EXPECT_TRUE(elector->IsLeader()) << "a conflict on the fast path ended leading";
  EXPECT_EQ(HolderOfTheLease(), "in-process");

  campaign.End();
  EXPECT_EQ(stopped_because_, "stopped");
}

TEST_F(LeaderElectorTest, AStopSaysSo) {
  auto elector = Elector(*client_);
  ASSERT_NE(elector, nullptr);
  Campaign campaign(*elector);
  ASSERT_TRUE(WaitUntil([&] { return started_.load(); }, std::chrono::seconds(20)));
  campaign.End();
  EXPECT_EQ(stopped_because_, "stopped");
  EXPECT_EQ(HolderOfTheLease(), "");
}

}  // namespace
}  // namespace modelplane::core::testing
