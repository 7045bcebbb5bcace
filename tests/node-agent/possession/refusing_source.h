// RangeSources for the possession tests that real sources cannot be made to behave as on demand:
// one that answers every read with a chosen error (a refusal, an address policy denial, a
// peer), and one that blocks until its read is cancelled. Shared filesystem sources over real
// folders cover serving, differing bytes and missing files.
#pragma once

#include <atomic>
#include <string>
#include <utility>

#include "core/clock/clock.h"
#include "node-agent/fetch/range_source.h"

namespace modelplane::agent::testing {

class RefusingSource final : public RangeSource {
 public:
  RefusingSource(std::string name, std::string tier, core::ErrorCode code)
      : name_(std::move(name)), tier_(std::move(tier)), code_(code) {}

  std::string_view tier() const override { return tier_; }
  std::string_view name() const override { return name_; }
  std::size_t max_concurrency() const override { return 1; }
  core::Status ReadRange(const SourceFile& file, std::uint64_t /*offset*/,
                         std::span<std::byte> /*destination*/,
                         const ReadContext& /*context*/) override {
    ++calls;
    return core::MakeError(code_, name_ + " refused " + file.path);
  }

  std::atomic<int> calls{0};

 private:
  std::string name_;
  std::string tier_;
  core::ErrorCode code_;
};

// Stands for a source that stalls: returns only once the proof is cancelled.
class BlockingSource final : public RangeSource {
 public:
  std::string_view tier() const override { return "sharedFilesystem"; }
  std::string_view name() const override { return "stalled"; }
  std::size_t max_concurrency() const override { return 1; }
  core::Status ReadRange(const SourceFile& /*file*/, std::uint64_t /*offset*/,
                         std::span<std::byte> /*destination*/,
                         const ReadContext& context) override {
    entered = true;
    const core::SystemClock system_clock;
    const core::Clock& clock = context.clock != nullptr ? *context.clock : system_clock;
    if (context.cancel != nullptr) {
      (void)context.cancel->SleepUntil(clock, core::Clock::SteadyTime::max());
    }
    return core::MakeError(core::ErrorCode::kCancelled, "cancelled");
  }

  std::atomic<bool> entered{false};
};

}  // namespace modelplane::agent::testing
