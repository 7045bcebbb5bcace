#include "node-agent/possession/possession_proof.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "core/api/model_revision.h"
#include "tests/node-agent/possession/possession_fixture.h"
#include "tests/node-agent/possession/refusing_source.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;
using testing::RefusingSource;

class PossessionProofTest : public testing::PossessionFixture {
 protected:
  core::Status Prove(const std::vector<SourceFile>& files, const std::vector<RangeSource*>& sources,
                     std::uint64_t seed = 1) {
    std::mt19937_64 random(seed);
    return ProveSourcesServe(files, PlanPossessionSample(files, random), sources, *store_,
                             ReadContext{});
  }
};

TEST_F(PossessionProofTest, SourceServingTheSameFilesProves) {
  const std::string weights = Bytes(3 * 1024 * 1024 + 17, 1);
  const std::string config = Bytes(300, 2);
  Hold("model.safetensors", weights);
  Hold("config.json", config);
  Serve("nfs", "model.safetensors", weights);
  Serve("nfs", "nested/config.json", config);
  auto nfs = Source("nfs");
  const std::vector<SourceFile> files = {File("model.safetensors", weights),
                                         File("nested/config.json", config), File("empty.txt", "")};
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    auto proven = Prove(files, {nfs.get()}, seed);
    EXPECT_TRUE(proven) << proven.error().ToString();
  }
}

// The file is smaller than one sampled range, so the range covers it whole and the one changed
// byte, far from the start, is always seen.
TEST_F(PossessionProofTest, OneDifferentByteFailsWithDataLoss) {
  const std::string held = Bytes(3000, 3);
  std::string served = held;
  served[2900] = static_cast<char>(served[2900] ^ 0x01);
  Hold("model.safetensors", held);
  Serve("nfs", "model.safetensors", served);
  auto nfs = Source("nfs");
  auto proven = Prove({File("model.safetensors", held)}, {nfs.get()});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kDataLoss);
  EXPECT_EQ(
      proven.error().message(),
      "source sharedFilesystem/nfs served bytes that differ from model.safetensors at offset 0");
}

TEST_F(PossessionProofTest, TheFirstSourceThatAnswersDecides) {
  const std::string held = Bytes(2000, 4);
  std::string other = held;
  other[1500] = static_cast<char>(other[1500] ^ 0x40);
  Hold("model.safetensors", held);
  Serve("wrong", "model.safetensors", other);
  Serve("right", "model.safetensors", held);
  auto wrong = Source("wrong");
  auto right = Source("right");
  const std::vector<SourceFile> files = {File("model.safetensors", held)};
  auto proven = Prove(files, {wrong.get(), right.get()});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(proven.error().message().find("source sharedFilesystem/wrong"), std::string::npos);
  EXPECT_TRUE(Prove(files, {right.get(), wrong.get()}));
}

TEST_F(PossessionProofTest, AFailingSourceFallsBackToTheNext) {
  const std::string held = Bytes(10000, 5);
  Hold("model.safetensors", held);
  Serve("nfs", "model.safetensors", held);
  auto empty = Source("empty");  // serves nothing: kNotFound
  RefusingSource down("down", "http", ErrorCode::kUnavailable);
  auto nfs = Source("nfs");
  auto proven = Prove({File("model.safetensors", held)}, {empty.get(), &down, nfs.get()});
  EXPECT_TRUE(proven) << proven.error().ToString();
  EXPECT_EQ(down.calls, 1);
}

TEST_F(PossessionProofTest, WhenEverySourceFailsTheMostTellingErrorIsReturned) {
  const std::string held = Bytes(10000, 6);
  Hold("weights/model.safetensors", held);
  const std::vector<SourceFile> files = {File("weights/model.safetensors", held)};
  auto missing = Source("empty");  // a real source without the file: kNotFound
  RefusingSource down("down", "http", ErrorCode::kUnavailable);
  RefusingSource slow("slow", "http", ErrorCode::kDeadlineExceeded);
  RefusingSource refused("refused", "objectStore", ErrorCode::kPermissionDenied);
  RefusingSource unauthenticated("unauthenticated", "objectStore", ErrorCode::kUnauthenticated);
  RefusingSource denied("denied", "http", ErrorCode::kAddressDenied);

  auto proven = Prove(files, {&down, missing.get(), &refused, &slow});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(proven.error().message().find("weights/model.safetensors"), std::string::npos)
      << proven.error().message();

  proven = Prove(files, {&down, missing.get(), &slow});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kNotFound);

  proven = Prove(files, {&slow, &down});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kDeadlineExceeded);

  proven = Prove(files, {&down, &denied});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kAddressDenied);

  proven = Prove(files, {missing.get(), &unauthenticated});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kUnauthenticated);
}

// A real source refuses a path that leads out of its root; that refusal is what is reported.
TEST_F(PossessionProofTest, AnEscapingPathAtTheSourceIsAccessDenied) {
  const std::string held = Bytes(5000, 7);
  Hold("model.safetensors", held);
  Serve("outside", "model.safetensors", held);
  auto nfs = Source("nfs");
  std::filesystem::create_symlink(base_ / "outside" / "model.safetensors",
                                  base_ / "nfs" / "model.safetensors");
  auto proven = Prove({File("model.safetensors", held)}, {nfs.get()});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kPermissionDenied) << proven.error().ToString();
}

TEST_F(PossessionProofTest, APeerIsNeverAsked) {
  const std::string held = Bytes(8000, 8);
  Hold("model.safetensors", held);
  Serve("nfs", "model.safetensors", held);
  RefusingSource peer("peer/10.0.0.7:7443", std::string(core::api::kTierPeer),
                      ErrorCode::kPermissionDenied);
  auto nfs = Source("nfs");
  const std::vector<SourceFile> files = {File("model.safetensors", held)};
  EXPECT_TRUE(Prove(files, {&peer, nfs.get()}));
  EXPECT_EQ(peer.calls, 0);
  // Peers alone cannot prove anything.
  auto proven = Prove(files, {&peer});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(peer.calls, 0);
}

TEST_F(PossessionProofTest, NoSourcesFails) {
  const std::string held = Bytes(100, 9);
  Hold("model.safetensors", held);
  auto proven = Prove({File("model.safetensors", held)}, {});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(proven.error().message(), "the revision names no source it can be read from");
}

TEST_F(PossessionProofTest, AFileTheNodeDoesNotHoldFailsWithoutAskingTheSources) {
  const std::string content = Bytes(100, 10);
  RefusingSource source("origin", "http", ErrorCode::kUnavailable);
  auto proven = Prove({File("model.safetensors", content)}, {&source});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(source.calls, 0);
}

TEST_F(PossessionProofTest, ACancelledProofStopsWithoutAskingFurther) {
  const std::string held = Bytes(100, 11);
  Hold("model.safetensors", held);
  RefusingSource source("origin", "http", ErrorCode::kUnavailable);
  core::CancellationToken cancel;
  cancel.Cancel();
  const std::vector<SourceFile> files = {File("model.safetensors", held)};
  std::mt19937_64 random(1);
  auto proven = ProveSourcesServe(files, PlanPossessionSample(files, random), {&source}, *store_,
                                  ReadContext{.cancel = &cancel});
  ASSERT_FALSE(proven);
  EXPECT_EQ(proven.error().code(), ErrorCode::kCancelled);
  EXPECT_EQ(source.calls, 0);
}

}  // namespace
}  // namespace modelplane::agent
