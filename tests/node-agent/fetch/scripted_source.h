// A RangeSource for engine tests that reads real files from a folder and can be told to
// misbehave the ways real sources do: answer 404, fail retryably a number of times, stall until
// the deadline, hold fewer bytes than asked (truncated), or serve flipped bits. The real tier
// implementations (node-agent/sources, node-agent/peer) have their own tests against real
// servers; this one exercises the engine's reactions to each failure precisely.
#pragma once

#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "node-agent/fetch/range_source.h"

namespace modelplane::agent::testing {

class ScriptedSource final : public RangeSource {
 public:
  ScriptedSource(std::string name, std::string tier, std::filesystem::path root,
                 std::size_t concurrency = 4)
      : name_(std::move(name)),
        tier_(std::move(tier)),
        root_(std::move(root)),
        concurrency_(concurrency) {}

  std::string_view tier() const override { return tier_; }
  std::string_view name() const override { return name_; }
  std::size_t max_concurrency() const override { return concurrency_; }
  std::string_view admission_key() const override { return admission_key_; }
  bool MayHoldLater(const core::Sha256Bytes&) const override { return staging; }

  // Counted against the node's admission under this key (a remote source's identity).
  void SetAdmissionKey(std::string key) { admission_key_ = std::move(key); }

  std::atomic<int> retryable_failures_left{0};
  std::atomic<bool> stall{false};
  std::atomic<bool> flip_bits{false};
  std::atomic<bool> missing{false};
  std::atomic<int> not_found_after_calls{-1};  // from that many calls on, answer 404
  std::atomic<int> delay_ms{0};
  // A peer still staging: answers 404 while not_yet is set, and the engine takes that as "not
  // yet" (MayHoldLater) while staging is set.
  std::atomic<bool> staging{false};
  std::atomic<bool> not_yet{false};
  // Fails retryably on every `fail_every`th call (a flaky source that still makes progress).
  std::atomic<int> fail_every{0};
  std::atomic<std::uint64_t> bytes_served{0};
  std::atomic<int> calls{0};
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight_seen{0};

  core::Status ReadRange(const SourceFile& file, std::uint64_t offset,
                         std::span<std::byte> destination, const ReadContext& context) override {
    const int call = ++calls;
    const int now = ++in_flight;
    int seen = max_in_flight_seen.load();
    while (now > seen && !max_in_flight_seen.compare_exchange_weak(seen, now)) {
    }
    struct Leave {
      std::atomic<int>& counter;
      ~Leave() { --counter; }
    } leave{in_flight};
    if (missing || not_yet || (not_found_after_calls >= 0 && call > not_found_after_calls)) {
      return core::MakeError(core::ErrorCode::kNotFound, name_ + ": no such file");
    }
    if (retryable_failures_left.fetch_sub(1) > 0 || (fail_every > 0 && call % fail_every == 0)) {
      return core::MakeError(core::ErrorCode::kUnavailable, name_ + ": 503");
    }
    if (stall) {
      while (context.Now() < context.deadline) {
        if (context.cancel != nullptr && context.cancel->cancelled()) {
          return core::MakeError(core::ErrorCode::kCancelled, "cancelled");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return core::MakeError(core::ErrorCode::kDeadlineExceeded, name_ + ": range deadline");
    }
    if (delay_ms > 0) {
      const core::SystemClock system_clock;
      const core::Clock& clock = context.clock != nullptr ? *context.clock : system_clock;
      if (context.cancel != nullptr &&
          !context.cancel->SleepFor(clock, std::chrono::milliseconds(delay_ms.load()))) {
        return core::MakeError(core::ErrorCode::kCancelled, "cancelled");
      }
    }
    std::ifstream in(root_ / file.path, std::ios::binary);
    if (!in) return core::MakeError(core::ErrorCode::kNotFound, name_ + ": no such file");
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(destination.data()),
            static_cast<std::streamsize>(destination.size()));
    if (static_cast<std::size_t>(in.gcount()) != destination.size()) {
      return std::unexpected(
          core::Error(core::ErrorCode::kDataLoss,
                      fmt::format("{}: {} holds fewer bytes than asked", name_, file.path), false));
    }
    if (flip_bits && !destination.empty()) destination[destination.size() / 2] ^= std::byte{0x10};
    bytes_served += destination.size();
    return core::Ok();
  }

 private:
  std::string name_;
  std::string tier_;
  std::filesystem::path root_;
  std::size_t concurrency_;
  std::string admission_key_;
};

}  // namespace modelplane::agent::testing
