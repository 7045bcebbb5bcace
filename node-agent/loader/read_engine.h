// Asynchronous positional reads from files into caller-owned buffers: the loader's I/O engine.
//
// Two implementations behind one interface. IoUringReadEngine submits reads to an io_uring
// (liburing) and reaps completions; it is what the loader uses whenever the kernel allows it.
// ThreadPoolReadEngine runs blocking pread(2) calls on a pool of threads, for kernels or
// sandboxes where io_uring is missing or forbidden (seccomp, io_uring_disabled=2). Which one
// runs is decided at run time by CreateReadEngine, which probes io_uring by setting one up.
// Both take at most `queue_depth` reads in flight; Submit beyond that is a programming error.
//
// A completion carries the byte count or a negative errno, exactly like pread; short reads are
// the caller's to handle (they are how end of file shows up).
//
// Thread safety: one thread submits and reaps; an engine is not shared between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::agent {

struct ReadRequest {
  int fd = -1;
  std::uint64_t offset = 0;
  std::byte* buffer = nullptr;
  std::uint32_t length = 0;
  std::uint64_t tag = 0;  // returned with the completion
};

struct ReadCompletion {
  std::uint64_t tag = 0;
  std::int64_t result = 0;  // bytes read, or -errno
};

class ReadEngine {
 public:
  virtual ~ReadEngine() = default;
  // Queues one read; at most queue_depth() may be outstanding.
  [[nodiscard]] virtual core::Status Submit(const ReadRequest& request) = 0;
  // Blocks until one read finishes.
  [[nodiscard]] virtual core::Result<ReadCompletion> WaitOne() = 0;
  [[nodiscard]] virtual std::uint32_t queue_depth() const = 0;
  [[nodiscard]] virtual std::string_view name() const = 0;
};

enum class EngineKind { kAuto, kIoUring, kThreadPool };

[[nodiscard]] std::string_view EngineKindName(EngineKind kind);

// kAuto: io_uring if it can be set up, else the thread pool. kIoUring fails where io_uring
// cannot be set up; kThreadPool never touches io_uring.
[[nodiscard]] core::Result<std::unique_ptr<ReadEngine>> CreateReadEngine(EngineKind kind,
                                                                         std::uint32_t queue_depth);

}  // namespace modelplane::agent
