#include "node-agent/possession/possession_ledger.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

class PossessionLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() /
            fmt::format("possession-ledger-test-{}-{}", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(base_);
    file_ = base_ / "store" / "possession" / "proofs.json";
    auto logger = core::Logger::Create({.component = "test", .sink = core::LogSink::Stream(log_)});
    ASSERT_TRUE(logger);
    logger_.emplace(*logger);
  }
  void TearDown() override { std::filesystem::remove_all(base_); }

  std::unique_ptr<PossessionLedger> Open() {
    auto ledger = PossessionLedger::Open(file_, &*logger_);
    EXPECT_TRUE(ledger) << ledger.error().ToString();
    return ledger ? std::move(*ledger) : nullptr;
  }

  void WriteFile(const std::string& content) {
    std::filesystem::create_directories(file_.parent_path());
    std::ofstream(file_, std::ios::binary | std::ios::trunc) << content;
  }

  std::filesystem::path base_;
  std::filesystem::path file_;
  std::ostringstream log_;
  std::optional<core::Logger> logger_;
};

// Test constants: a throwing hash would end the test anyway.
// NOLINTBEGIN(cert-err58-cpp)
const core::Sha256Bytes kFirst = core::Sha256Of("first revision");
const core::Sha256Bytes kSecond = core::Sha256Of("second revision");
// NOLINTEND(cert-err58-cpp)

TEST_F(PossessionLedgerTest, RecordsAreFoundByDigestAndKey) {
  auto ledger = Open();
  EXPECT_TRUE(std::filesystem::is_directory(file_.parent_path()));
  EXPECT_FALSE(ledger->Contains(kFirst, "team-a/llama"));
  ASSERT_TRUE(ledger->Record(kFirst, "team-a/llama"));
  ASSERT_TRUE(ledger->Record(kFirst, "team-b/llama"));
  ASSERT_TRUE(ledger->Record(kFirst, "team-b/llama"));  // already there
  ASSERT_TRUE(ledger->Record(kSecond, "team-a/mistral"));
  EXPECT_TRUE(ledger->Contains(kFirst, "team-a/llama"));
  EXPECT_TRUE(ledger->Contains(kFirst, "team-b/llama"));
  // A key proven for one digest says nothing about another.
  EXPECT_FALSE(ledger->Contains(kSecond, "team-a/llama"));
  EXPECT_FALSE(ledger->Contains(kFirst, "team-c/llama"));
  EXPECT_EQ(ledger->KeysFor(kFirst), (std::set<std::string>{"team-a/llama", "team-b/llama"}));
  EXPECT_TRUE(ledger->KeysFor(core::Sha256Of("unknown")).empty());
}

TEST_F(PossessionLedgerTest, RecordsSurviveAReopen) {
  {
    auto ledger = Open();
    ASSERT_TRUE(ledger->Record(kFirst, "team-a/llama"));
    ASSERT_TRUE(ledger->Record(kSecond, "team-b/mistral"));
  }
  auto reopened = Open();
  EXPECT_TRUE(reopened->Contains(kFirst, "team-a/llama"));
  EXPECT_TRUE(reopened->Contains(kSecond, "team-b/mistral"));
  EXPECT_FALSE(reopened->Contains(kFirst, "team-b/mistral"));
  EXPECT_EQ(log_.str().find("possession_ledger_discarded"), std::string::npos) << log_.str();
}

TEST_F(PossessionLedgerTest, RetainDropsDigestsNoLongerHeldAndPersistsIt) {
  {
    auto ledger = Open();
    ASSERT_TRUE(ledger->Record(kFirst, "team-a/llama"));
    ASSERT_TRUE(ledger->Record(kSecond, "team-a/mistral"));
    ASSERT_TRUE(ledger->Retain({kFirst, kSecond}));
    EXPECT_TRUE(ledger->Contains(kSecond, "team-a/mistral"));
    ASSERT_TRUE(ledger->Retain({kFirst}));
    EXPECT_TRUE(ledger->Contains(kFirst, "team-a/llama"));
    EXPECT_FALSE(ledger->Contains(kSecond, "team-a/mistral"));
    EXPECT_TRUE(ledger->KeysFor(kSecond).empty());
  }
  auto reopened = Open();
  EXPECT_TRUE(reopened->Contains(kFirst, "team-a/llama"));
  EXPECT_FALSE(reopened->Contains(kSecond, "team-a/mistral"));
}

TEST_F(PossessionLedgerTest, RetainWithNothingToDropDoesNotWrite) {
  auto ledger = Open();
  ASSERT_TRUE(ledger->Retain({kFirst}));
  EXPECT_FALSE(std::filesystem::exists(file_));
  ASSERT_TRUE(ledger->Record(kFirst, "team-a/llama"));
  const auto written = std::filesystem::last_write_time(file_);
  std::filesystem::remove(file_);
  ASSERT_TRUE(ledger->Retain({kFirst}));
  EXPECT_FALSE(std::filesystem::exists(file_)) << "rewritten at " << written.time_since_epoch();
}

TEST_F(PossessionLedgerTest, AMalformedFileIsAnEmptyLedgerNotAnError) {
  for (const std::string& content : std::vector<std::string>{
           "{not json", "[]", R"({"version": 2, "proofs": []})",
           R"({"version": 1, "proofs": [{"digest": "sha256:zz", "keys": ["a/b"]}]})",
           R"({"version": 1, "proofs": [{"digest": ")" + core::FormatDigest(kFirst) +
               R"(", "keys": [7]}]})"}) {
    WriteFile(content);
    auto ledger = Open();
    ASSERT_TRUE(ledger) << content;
    EXPECT_TRUE(ledger->KeysFor(kFirst).empty()) << content;
    EXPECT_NE(log_.str().find("possession_ledger_discarded"), std::string::npos) << content;
    log_.str("");
    // And it works from there on.
    ASSERT_TRUE(ledger->Record(kFirst, "team-a/llama"));
  }
  auto reopened = Open();
  EXPECT_TRUE(reopened->Contains(kFirst, "team-a/llama"));
}

TEST_F(PossessionLedgerTest, AnOversizedFileIsDiscarded) {
  nlohmann::json keys = nlohmann::json::array();
  for (std::size_t bytes = 0; bytes <= kMaxPossessionLedgerBytes;) {
    keys.push_back(fmt::format("namespace-{}/{}", keys.size(), std::string(200, 'n')));
    bytes += keys.back().get_ref<const std::string&>().size() + 3;
  }
  WriteFile(nlohmann::json{{"version", 1},
                           {"proofs", {{{"digest", core::FormatDigest(kFirst)}, {"keys", keys}}}}}
                .dump());
  auto ledger = Open();
  ASSERT_TRUE(ledger);
  EXPECT_TRUE(ledger->KeysFor(kFirst).empty());
  EXPECT_NE(log_.str().find("possession_ledger_discarded"), std::string::npos);
}

TEST_F(PossessionLedgerTest, RecordsPastTheBoundAreRefused) {
  // Written by hand: recording 65536 proofs one durable write at a time takes minutes.
  nlohmann::json keys = nlohmann::json::array();
  for (std::size_t index = 0; index < kMaxPossessionRecords; ++index) {
    keys.push_back(fmt::format("n/{}", index));
  }
  WriteFile(nlohmann::json{{"version", 1},
                           {"proofs", {{{"digest", core::FormatDigest(kFirst)}, {"keys", keys}}}}}
                .dump());
  auto ledger = Open();
  ASSERT_TRUE(ledger);
  EXPECT_TRUE(ledger->Contains(kFirst, "n/65535"));
  auto recorded = ledger->Record(kSecond, "team-a/llama");
  ASSERT_FALSE(recorded);
  EXPECT_EQ(recorded.error().code(), core::ErrorCode::kResourceExhausted);
  EXPECT_FALSE(ledger->Contains(kSecond, "team-a/llama"));
  EXPECT_TRUE(ledger->Record(kFirst, "n/0"));  // already there: nothing to add
  // Room again once the digest is no longer held.
  ASSERT_TRUE(ledger->Retain({kSecond}));
  EXPECT_TRUE(ledger->Record(kSecond, "team-a/llama"));
}

// What is written must be readable on the next start, so the file stays within its read limit.
TEST_F(PossessionLedgerTest, ARecordThatWouldOutgrowTheFileIsRefused) {
  nlohmann::json keys = nlohmann::json::array();
  const std::string name(250, 'n');
  // Within a record or two of the limit (the rest of the file is under 200 bytes).
  for (std::size_t bytes = 0; bytes + 400 < kMaxPossessionLedgerBytes - 200;) {
    keys.push_back(fmt::format("namespace-{}/{}", keys.size(), name));
    bytes += keys.back().get_ref<const std::string&>().size() + 3;
  }
  WriteFile(nlohmann::json{{"version", 1},
                           {"proofs", {{{"digest", core::FormatDigest(kFirst)}, {"keys", keys}}}}}
                .dump());
  auto ledger = Open();
  ASSERT_FALSE(ledger->KeysFor(kFirst).empty());
  auto recorded = ledger->Record(kSecond, "big/" + name);
  auto again = ledger->Record(kSecond, "bigger/" + name);
  ASSERT_FALSE(recorded && again);
  EXPECT_EQ((recorded ? again : recorded).error().code(), core::ErrorCode::kResourceExhausted);
  auto reopened = Open();
  EXPECT_FALSE(reopened->KeysFor(kFirst).empty());
  EXPECT_EQ(log_.str().find("possession_ledger_discarded"), std::string::npos);
}

}  // namespace
}  // namespace modelplane::agent
