// Runs a level-based reconciler over a WorkQueue with N worker threads.
//
// A reconcile gets a key, never an event, and answers one of:
//   done                 -> the key's backoff is forgotten;
//   requeue after T      -> looked at again after T (polling something external);
//   an error             -> retried with the queue's rate limiter (per-item backoff + bucket),
//                           whether or not the error says a retry can succeed: a 403 from a
//                           policy, a 401 during token rotation or a 422 can all clear (as in
//                           controller-runtime); an exception from the reconciler is an error;
//   a terminal error     -> (Error::MarkTerminal) backoff forgotten, not retried until the
//                           object changes again.
// Because the queue never hands one key to two workers, a reconciler needs no per-object lock.
// Thread safety: Start and Stop from one owner thread; the reconciler is called concurrently
// for different keys and must be safe for that.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/error/error.h"
#include "core/workqueue/work_queue.h"

namespace modelplane::core {

struct ReconcileResult {
  std::optional<std::chrono::nanoseconds> requeue_after;

  [[nodiscard]] static ReconcileResult Done() { return {}; }
  [[nodiscard]] static ReconcileResult RequeueAfter(std::chrono::nanoseconds delay) {
    return {delay};
  }
};

using Reconciler = std::function<Result<ReconcileResult>(const std::string& key)>;

// Counts of outcomes, for metrics and tests.
struct ControllerStats {
  std::atomic<std::uint64_t> reconciles{0};
  std::atomic<std::uint64_t> requeues_after{0};
  std::atomic<std::uint64_t> retried_errors{0};
  std::atomic<std::uint64_t> terminal_errors{0};
};

class ControllerRunner {
 public:
  // Called for every error a reconcile returns (log it, count it); may be empty.
  using ErrorObserver = std::function<void(const std::string& key, const Error& error)>;

  ControllerRunner(WorkQueue& queue, Reconciler reconciler, int workers,
                   ErrorObserver on_error = {});
  ControllerRunner(const ControllerRunner&) = delete;
  ControllerRunner& operator=(const ControllerRunner&) = delete;
  ~ControllerRunner();  // Stop()

  void Start();
  // Shuts the queue down, lets in-flight reconciles finish, and joins the workers.
  void Stop();
  [[nodiscard]] const ControllerStats& stats() const { return stats_; }

 private:
  void RunWorker();
  void ProcessOne(const std::string& key);

  WorkQueue& queue_;
  Reconciler reconciler_;
  const int worker_count_;
  ErrorObserver on_error_;
  ControllerStats stats_;
  std::vector<std::thread> workers_;
};

}  // namespace modelplane::core
