#include "node-agent/loader/read_engine.h"

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <liburing.h>
#include <unistd.h>

namespace modelplane::agent {
namespace {

using core::ErrorCode;
using core::MakeError;

class IoUringReadEngine final : public ReadEngine {
 public:
  static core::Result<std::unique_ptr<ReadEngine>> Create(std::uint32_t queue_depth) {
    auto engine = std::unique_ptr<IoUringReadEngine>(new IoUringReadEngine(queue_depth));
    const int result = io_uring_queue_init(queue_depth, &engine->ring_, 0);
    if (result < 0) {
      return MakeError(
          ErrorCode::kUnavailable,
          fmt::format("io_uring_queue_init: {}", std::system_category().message(-result)));
    }
    engine->initialised_ = true;
    return std::unique_ptr<ReadEngine>(std::move(engine));
  }

  ~IoUringReadEngine() override {
    if (initialised_) io_uring_queue_exit(&ring_);
  }

  core::Status Submit(const ReadRequest& request) override {
    if (in_flight_ >= queue_depth_) {
      return MakeError(ErrorCode::kInternal, "io_uring: more reads than the queue depth");
    }
    io_uring_sqe* entry = io_uring_get_sqe(&ring_);
    if (entry == nullptr) return MakeError(ErrorCode::kInternal, "io_uring: submission queue full");
    io_uring_prep_read(entry, request.fd, request.buffer, request.length, request.offset);
    io_uring_sqe_set_data64(entry, request.tag);
    const int submitted = io_uring_submit(&ring_);
    if (submitted < 0) {
      return MakeError(ErrorCode::kIo, fmt::format("io_uring_submit: {}",
                                                   std::system_category().message(-submitted)));
    }
    ++in_flight_;
    return core::Ok();
  }

  core::Result<ReadCompletion> WaitOne() override {
    io_uring_cqe* completion = nullptr;
    int result = 0;
    do {
      result = io_uring_wait_cqe(&ring_, &completion);
    } while (result == -EINTR);
    if (result < 0) {
      return MakeError(ErrorCode::kIo, fmt::format("io_uring_wait_cqe: {}",
                                                   std::system_category().message(-result)));
    }
    ReadCompletion done{.tag = io_uring_cqe_get_data64(completion), .result = completion->res};
    io_uring_cqe_seen(&ring_, completion);
    --in_flight_;
    return done;
  }

  std::uint32_t queue_depth() const override { return queue_depth_; }
  std::string_view name() const override { return "io_uring"; }

 private:
  explicit IoUringReadEngine(std::uint32_t queue_depth) : queue_depth_(queue_depth) {}

  io_uring ring_{};
  bool initialised_ = false;
  std::uint32_t queue_depth_;
  std::uint32_t in_flight_ = 0;
};

// One worker per queue slot: a blocking pread holds its thread, so queue depth N needs N
// threads to keep N reads at the device.
class ThreadPoolReadEngine final : public ReadEngine {
 public:
  explicit ThreadPoolReadEngine(std::uint32_t queue_depth) : queue_depth_(queue_depth) {
    workers_.reserve(queue_depth);
    for (std::uint32_t i = 0; i < queue_depth; ++i) {
      workers_.emplace_back([this] { Work(); });
    }
  }

  ~ThreadPoolReadEngine() override {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  core::Status Submit(const ReadRequest& request) override {
    {
      const std::lock_guard lock(mutex_);
      if (in_flight_ >= queue_depth_) {
        return MakeError(ErrorCode::kInternal, "pread pool: more reads than the queue depth");
      }
      ++in_flight_;
      pending_.push_back(request);
    }
    work_ready_.notify_one();
    return core::Ok();
  }

  core::Result<ReadCompletion> WaitOne() override {
    std::unique_lock lock(mutex_);
    if (in_flight_ == 0) return MakeError(ErrorCode::kInternal, "pread pool: nothing in flight");
    done_ready_.wait(lock, [this] { return !done_.empty(); });
    const ReadCompletion done = done_.front();
    done_.pop_front();
    --in_flight_;
    return done;
  }

  std::uint32_t queue_depth() const override { return queue_depth_; }
  std::string_view name() const override { return "pread-pool"; }

 private:
  void Work() {
    for (;;) {
      ReadRequest request;
      {
        std::unique_lock lock(mutex_);
        work_ready_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
        if (stopping_) return;
        request = pending_.front();
        pending_.pop_front();
      }
      ssize_t result = 0;
      do {
        result =
            ::pread(request.fd, request.buffer, request.length, static_cast<off_t>(request.offset));
      } while (result < 0 && errno == EINTR);
      const ReadCompletion done{.tag = request.tag, .result = result < 0 ? -errno : result};
      {
        const std::lock_guard lock(mutex_);
        done_.push_back(done);
      }
      done_ready_.notify_one();
    }
  }

  const std::uint32_t queue_depth_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable done_ready_;
  std::deque<ReadRequest> pending_;
  std::deque<ReadCompletion> done_;
  std::uint32_t in_flight_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace

std::string_view EngineKindName(EngineKind kind) {
  switch (kind) {
    case EngineKind::kAuto: return "auto";
    case EngineKind::kIoUring: return "io_uring";
    case EngineKind::kThreadPool: return "pread-pool";
  }
  return "unknown";
}

core::Result<std::unique_ptr<ReadEngine>> CreateReadEngine(EngineKind kind,
                                                           std::uint32_t queue_depth) {
  if (queue_depth == 0 || queue_depth > 4096) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("queue depth {} is outside [1, 4096]", queue_depth));
  }
  if (kind == EngineKind::kThreadPool) {
    return std::unique_ptr<ReadEngine>(std::make_unique<ThreadPoolReadEngine>(queue_depth));
  }
  auto uring = IoUringReadEngine::Create(queue_depth);
  if (uring || kind == EngineKind::kIoUring) return uring;
  return std::unique_ptr<ReadEngine>(std::make_unique<ThreadPoolReadEngine>(queue_depth));
}

}  // namespace modelplane::agent
