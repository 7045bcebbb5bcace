#include "core/workqueue/controller_runner.h"

namespace modelplane::core {

ControllerRunner::ControllerRunner(WorkQueue& queue, Reconciler reconciler, int workers,
                                   ErrorObserver on_error)
    : queue_(queue),
      reconciler_(std::move(reconciler)),
      worker_count_(workers < 1 ? 1 : workers),
      on_error_(std::move(on_error)) {}

ControllerRunner::~ControllerRunner() {
  Stop();
}

void ControllerRunner::Start() {
  if (!workers_.empty()) return;
  for (int i = 0; i < worker_count_; ++i) workers_.emplace_back([this] { RunWorker(); });
}

void ControllerRunner::Stop() {
  queue_.ShutDownWithDrain();
  for (auto& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  workers_.clear();
}

void ControllerRunner::RunWorker() {
  while (auto key = queue_.Get()) {
    ProcessOne(*key);
    queue_.Done(*key);
  }
}

void ControllerRunner::ProcessOne(const std::string& key) {
  stats_.reconciles++;
  Result<ReconcileResult> result = [&]() -> Result<ReconcileResult> {
    // A reconciler that throws is a bug; contain it to this key instead of ending the worker.
    try {
      return reconciler_(key);
    } catch (const std::exception& exception) {
      return MakeError(ErrorCode::kInternal,
                       std::string("reconciler threw an exception: ") + exception.what());
    }
  }();
  if (result) {
    queue_.Forget(key);
    if (result->requeue_after) {
      stats_.requeues_after++;
      queue_.AddAfter(key, *result->requeue_after);
    }
    return;
  }
  if (on_error_) on_error_(key, result.error());
  if (result.error().terminal()) {
    stats_.terminal_errors++;
    queue_.Forget(key);
  } else {
    stats_.retried_errors++;
    queue_.AddRateLimited(key);
  }
}

}  // namespace modelplane::core
