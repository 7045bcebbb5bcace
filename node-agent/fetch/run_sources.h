// The sources of one fetch as the fetch engine uses them: the request's fixed list followed by
// its growing SourceSet, and per source the requests in flight (within the source's own
// concurrency and, for remote sources, the node's admission), a cool-down, and a retry quota.
//
// - A source that let a range pass its deadline is cooled down for every file of the fetch, so
//   a stalled peer or origin costs one deadline, not one per file.
// - Retries are paid from a quota that each success refills (AWS SDK retry quotas): a flaky
//   source that still delivers keeps its retries, one that only fails runs dry.
// - Every request is reported to the node's telemetry (bytes, outcome, time to first byte).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "node-agent/fetch/range_source.h"
#include "node-agent/fetch/source_admission.h"
#include "node-agent/fetch/source_set.h"
#include "node-agent/fetch/source_telemetry.h"

namespace modelplane::agent {

class RunSources {
 public:
  struct Options {
    std::chrono::milliseconds stall_cooldown{30'000};
    int retry_quota = 32;
  };

  RunSources(const std::vector<RangeSource*>& fixed, SourceSet* more, SourceAdmission* admission,
             SourceTelemetryRecorder* telemetry, const core::Clock& clock, Options options);

  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] RangeSource& at(std::size_t index) const;
  // Admission key for remote sources, else the source's name: how telemetry names it.
  [[nodiscard]] std::string TelemetryName(std::size_t index) const;

  // A request slot on the source, or false (its concurrency is used up, it is cooling down, or
  // the node's admission says wait). Never blocks.
  [[nodiscard]] bool TryAcquire(std::size_t index);
  // Ends a request TryAcquire allowed: frees the slot and reports the outcome; `outcome` is
  // nullopt for a request abandoned by a cancel (counted nowhere).
  void Release(std::size_t index, std::optional<RequestOutcome> outcome, std::uint64_t bytes,
               std::optional<std::chrono::milliseconds> time_to_first_byte,
               std::optional<std::chrono::milliseconds> retry_after);

  void CoolDown(std::size_t index);
  [[nodiscard]] bool CoolingDown(std::size_t index) const;
  // Takes one retry from the source's quota; false when it is empty.
  [[nodiscard]] bool SpendRetry(std::size_t index);

  // Waits until a slot is freed or `timeout` passes; false when `cancel` fired.
  [[nodiscard]] bool WaitForChange(core::CancellationToken& cancel,
                                   std::chrono::milliseconds timeout);
  // Wakes every waiter (the fetch is stopping).
  void WakeAll();

 private:
  struct State {
    std::size_t in_use = 0;
    core::Clock::SteadyTime cooled_until{};
    int retry_quota = 0;
  };
  State& StateLocked(std::size_t index);

  const std::vector<RangeSource*>& fixed_;
  SourceSet* more_;
  SourceAdmission* admission_;
  SourceTelemetryRecorder* telemetry_;
  const core::Clock& clock_;
  const Options options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t generation_ = 0;  // counts releases, so a waiter sees one that came before it slept
  std::vector<State> states_;
};

}  // namespace modelplane::agent
