#include "node-agent/possession/possession_prover.h"

#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/api/model_cache.h"
#include "node-agent/sources/revision_sources.h"
#include "tests/node-agent/possession/possession_fixture.h"
#include "tests/node-agent/possession/refusing_source.h"

namespace modelplane::agent {
namespace {

// The prover with the real store, ledger and the shared filesystem sources the revision's spec
// names (built as the agent builds them), on a manual clock for the backoff.
class PossessionProverTest : public testing::PossessionFixture {
 protected:
  void SetUp() override {
    PossessionFixture::SetUp();
    auto logger = core::Logger::Create({.component = "test", .sink = core::LogSink::Stream(log_)});
    ASSERT_TRUE(logger);
    logger_.emplace(*logger);
    auto ledger = PossessionLedger::Open(base_ / "cache" / "possession" / "proofs.json", nullptr);
    ASSERT_TRUE(ledger);
    ledger_ = std::move(*ledger);
    prover_ = std::make_unique<PossessionProver>(PossessionProver::Dependencies{
        .sources = [this](const LoadedRevision& revision)
            -> core::Result<std::vector<std::unique_ptr<RangeSource>>> {
          ++factory_calls_;
          if (blocking_) {
            std::vector<std::unique_ptr<RangeSource>> sources;
            auto source = std::make_unique<testing::BlockingSource>();
            blocking_source_ = source.get();
            sources.push_back(std::move(source));
            return sources;
          }
          const auto& sources = revision.revision.spec.sources;
          return CreateRevisionSources(sources, OperatorNamedGrants(sources), {});
        },
        .catalog = store_.get(),
        .ledger = ledger_.get(),
        .logger = &*logger_,
        .clock = &clock_,
        .on_change = [this] { ++changes_; }});
  }
  void TearDown() override {
    prover_.reset();
    PossessionFixture::TearDown();
  }

  // A revision in `namespace_name` naming the folder `folder` as its shared filesystem source.
  LoadedRevision Revision(const std::string& content, const std::string& namespace_name = "team-b",
                          const std::string& folder = "nfs") {
    core::api::ModelRevision revision;
    revision.metadata.name = "llama";
    revision.metadata.namespace_name = namespace_name;
    revision.spec.format = "safetensors";
    revision.spec.engine = {.name = "vllm", .version = "0.6.3"};
    revision.spec.files = {{.path = "model.safetensors",
                            .size = static_cast<std::int64_t>(content.size()),
                            .sha256 = core::FormatDigest(core::Sha256Of(content)),
                            .role = "weights"}};
    std::filesystem::create_directories(base_ / folder);
    revision.spec.sources = {{.name = folder,
                              .type = "sharedFilesystem",
                              .shared_filesystem = core::api::SharedFilesystemLocation{
                                  .path = (base_ / folder).string()}}};
    auto loaded = CheckRevision(revision);
    EXPECT_TRUE(loaded) << loaded.error().ToString();
    return *loaded;
  }

  static std::string Key(const LoadedRevision& revision) {
    return revision.revision.metadata.namespace_name + "/" + revision.revision.metadata.name;
  }

  // Until the revision is proven or its proof failed; nullopt: proven.
  std::optional<PossessionState> WaitForOutcome(const LoadedRevision& revision) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < give_up) {
      if (ledger_->Contains(revision.digest, Key(revision))) return std::nullopt;
      auto state = prover_->State(revision.digest, Key(revision));
      if (state && state->phase == PossessionState::Phase::kFailed) return state;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "no outcome in time";
    return prover_->State(revision.digest, Key(revision));
  }

  core::ManualClock clock_;
  std::ostringstream log_;
  std::optional<core::Logger> logger_;
  std::unique_ptr<PossessionLedger> ledger_;
  std::unique_ptr<PossessionProver> prover_;
  std::atomic<int> factory_calls_{0};
  std::atomic<int> changes_{0};
  std::atomic<bool> blocking_{false};
  std::atomic<testing::BlockingSource*> blocking_source_{nullptr};
};

TEST_F(PossessionProverTest, AProvenRevisionLandsInTheLedger) {
  const std::string content = Bytes(50000, 1);
  Hold("model.safetensors", content);
  Serve("nfs", "model.safetensors", content);
  const LoadedRevision revision = Revision(content);
  prover_->Want(revision);
  EXPECT_EQ(WaitForOutcome(revision), std::nullopt);
  EXPECT_EQ(ledger_->KeysFor(revision.digest), (std::set<std::string>{"team-b/llama"}));
  EXPECT_EQ(prover_->State(revision.digest, "team-b/llama"), std::nullopt);
  EXPECT_EQ(prover_->RetryAt(revision.digest, "team-b/llama"), std::nullopt);
  prover_->Stop();  // the log line and on_change come after the ledger's record
  EXPECT_GE(changes_, 1);
  EXPECT_NE(log_.str().find("possession_proven"), std::string::npos) << log_.str();
}

TEST_F(PossessionProverTest, WantAfterProvenIsANoOp) {
  const std::string content = Bytes(1000, 2);
  Hold("model.safetensors", content);
  Serve("nfs", "model.safetensors", content);
  const LoadedRevision revision = Revision(content);
  prover_->Want(revision);
  ASSERT_EQ(WaitForOutcome(revision), std::nullopt);
  const int calls = factory_calls_;
  prover_->Want(revision);
  EXPECT_EQ(prover_->State(revision.digest, Key(revision)), std::nullopt);
  EXPECT_EQ(factory_calls_, calls);
}

// The same spec in another namespace is a claim of its own: proven (or not) by itself.
TEST_F(PossessionProverTest, EachNamespaceProvesItsOwnClaim) {
  const std::string content = Bytes(2000, 3);
  Hold("model.safetensors", content);
  Serve("nfs", "model.safetensors", content);
  const LoadedRevision owner = Revision(content, "team-a", "nfs");
  const LoadedRevision copier = Revision(content, "team-b", "unreadable");
  prover_->Want(owner);
  prover_->Want(copier);
  EXPECT_EQ(WaitForOutcome(owner), std::nullopt);
  auto failed = WaitForOutcome(copier);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->reason, core::api::kCacheReasonSourceNotFound);
  EXPECT_TRUE(ledger_->Contains(owner.digest, "team-a/llama"));
  EXPECT_FALSE(ledger_->Contains(copier.digest, "team-b/llama"));
}

TEST_F(PossessionProverTest, AFailedProofWaitsForItsRetryTime) {
  const std::string content = Bytes(3000, 4);
  std::string other = content;
  other[2999] = static_cast<char>(other[2999] ^ 0x01);
  Hold("model.safetensors", content);
  Serve("nfs", "model.safetensors", other);
  const LoadedRevision revision = Revision(content);
  prover_->Want(revision);
  auto failed = WaitForOutcome(revision);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->phase, PossessionState::Phase::kFailed);
  EXPECT_EQ(failed->reason, core::api::kCacheReasonPossessionNotProven);
  EXPECT_NE(failed->message.find("not reused"), std::string::npos);
  EXPECT_EQ(failed->message.find("sha256"), std::string::npos);
  auto retry_at = prover_->RetryAt(revision.digest, Key(revision));
  ASSERT_TRUE(retry_at);
  // The first backoff: 30 s, jittered down to no less than half.
  EXPECT_GE(*retry_at, clock_.Now() + std::chrono::seconds(15));
  EXPECT_LE(*retry_at, clock_.Now() + std::chrono::seconds(30));
  EXPECT_FALSE(ledger_->Contains(revision.digest, Key(revision)));

  // Fixed at the source, but not tried again before its time.
  Serve("nfs", "model.safetensors", content);
  const int calls = factory_calls_;
  prover_->Want(revision);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(factory_calls_, calls);
  EXPECT_EQ(prover_->State(revision.digest, Key(revision))->phase, PossessionState::Phase::kFailed);

  clock_.Advance(std::chrono::seconds(31));
  prover_->Want(revision);
  EXPECT_EQ(WaitForOutcome(revision), std::nullopt);
  EXPECT_EQ(factory_calls_, calls + 1);
  prover_->Stop();
  EXPECT_NE(log_.str().find("possession_not_proven"), std::string::npos) << log_.str();
}

TEST_F(PossessionProverTest, WhatIsNoLongerWantedIsForgotten) {
  const std::string content = Bytes(3000, 6);
  std::string other = content;
  for (char& byte : other) byte = static_cast<char>(byte ^ 0x01);
  Hold("model.safetensors", content);
  Serve("nfs", "model.safetensors", other);
  const LoadedRevision revision = Revision(content);
  prover_->Want(revision);
  auto failed = WaitForOutcome(revision);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->phase, PossessionState::Phase::kFailed);
  prover_->Keep({{revision.digest, Key(revision)}});
  EXPECT_TRUE(prover_->State(revision.digest, Key(revision))) << "still wanted, still failed";
  prover_->Keep({});
  EXPECT_EQ(prover_->State(revision.digest, Key(revision)), std::nullopt);
  EXPECT_EQ(prover_->RetryAt(revision.digest, Key(revision)), std::nullopt);
  // Wanted again, it is tried at once: nothing remembers the backoff of a forgotten proof.
  Serve("nfs", "model.safetensors", content);
  prover_->Want(revision);
  EXPECT_EQ(WaitForOutcome(revision), std::nullopt);
  EXPECT_TRUE(ledger_->Contains(revision.digest, Key(revision)));
}

TEST_F(PossessionProverTest, StopJoinsWhileAProofIsBlocked) {
  const std::string content = Bytes(3000, 5);
  Hold("model.safetensors", content);
  blocking_ = true;
  const LoadedRevision revision = Revision(content);
  prover_->Want(revision);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((blocking_source_ == nullptr || !blocking_source_.load()->entered) &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(blocking_source_ != nullptr && blocking_source_.load()->entered);
  EXPECT_EQ(prover_->State(revision.digest, Key(revision))->phase,
            PossessionState::Phase::kProving);
  prover_->Stop();
  EXPECT_EQ(prover_->State(revision.digest, Key(revision)), std::nullopt);
  EXPECT_FALSE(ledger_->Contains(revision.digest, Key(revision)));
  prover_->Want(revision);  // stopped: nothing is queued
  EXPECT_EQ(prover_->State(revision.digest, Key(revision)), std::nullopt);
}

}  // namespace
}  // namespace modelplane::agent
