#include "node-agent/store/space_ledger.h"

#include <gtest/gtest.h>

namespace modelplane::agent {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

// The filesystem's free figure is a variable the test moves, as preallocation would.
class SpaceLedgerTest : public ::testing::Test {
 protected:
  std::uint64_t filesystem_free_ = 100 * kMiB;
  SpaceLedger ledger_{/*capacity_bytes=*/1000 * kMiB, /*headroom_bytes=*/10 * kMiB,
                      [this] { return filesystem_free_; }};
};

TEST_F(SpaceLedgerTest, ReservationsNotYetOnDiskComeOffTheFilesystemFigure) {
  // 90 MiB free after the headroom. Nothing preallocated yet: the filesystem does not know.
  auto first = ledger_.Reserve(60 * kMiB);
  ASSERT_TRUE(first);
  auto second = ledger_.Reserve(40 * kMiB);
  ASSERT_FALSE(second) << "60 + 40 MiB cannot fit in 90 MiB";
  EXPECT_EQ(second.error().code(), core::ErrorCode::kResourceExhausted);

  // The first staging preallocates: the filesystem's figure now includes it, and the ledger
  // stops subtracting it a second time.
  filesystem_free_ -= 60 * kMiB;
  first->MarkOnDisk();
  EXPECT_FALSE(ledger_.Reserve(40 * kMiB)) << "still only 30 MiB free";
  EXPECT_TRUE(ledger_.Reserve(30 * kMiB));
}

TEST_F(SpaceLedgerTest, ReleasingEitherKindOfReservationFreesItsBytes) {
  auto on_disk = ledger_.Reserve(50 * kMiB);
  auto pending = ledger_.Reserve(30 * kMiB);
  ASSERT_TRUE(on_disk && pending);
  filesystem_free_ -= 50 * kMiB;
  on_disk->MarkOnDisk();
  on_disk->MarkOnDisk();  // once counts once
  EXPECT_EQ(ledger_.Usage().reserved_bytes, 80 * kMiB);

  pending->Release();
  on_disk->Release();
  filesystem_free_ += 50 * kMiB;
  EXPECT_EQ(ledger_.Usage().reserved_bytes, 0u);
  EXPECT_TRUE(ledger_.Reserve(90 * kMiB)) << "everything came back";
}

TEST_F(SpaceLedgerTest, CommitTurnsAReservationIntoUsedBytes) {
  auto reservation = ledger_.Reserve(20 * kMiB);
  ASSERT_TRUE(reservation);
  reservation->MarkOnDisk();
  Reservation moved = std::move(*reservation);  // the flag travels with the bytes
  filesystem_free_ -= 20 * kMiB;
  moved.Commit();
  const SpaceUsage usage = ledger_.Usage();
  EXPECT_EQ(usage.used_bytes, 20 * kMiB);
  EXPECT_EQ(usage.reserved_bytes, 0u);
  auto rest = ledger_.Reserve(70 * kMiB);
  EXPECT_TRUE(rest);
  EXPECT_FALSE(ledger_.Reserve(1 * kMiB)) << "70 MiB reserved of the 70 MiB left";
}

TEST_F(SpaceLedgerTest, CapacityBoundsWhateverTheFilesystemSays) {
  SpaceLedger small(/*capacity_bytes=*/10 * kMiB, 0, [] { return 1000 * kMiB; });
  auto reservation = small.Reserve(8 * kMiB);  // held: a temporary would give its bytes back
  ASSERT_TRUE(reservation);
  EXPECT_FALSE(small.Reserve(3 * kMiB));
  EXPECT_TRUE(small.Reserve(2 * kMiB));
}

}  // namespace
}  // namespace modelplane::agent
