// RunConcurrently: calls work(i) for every i in [0, count) on at most `limit` threads at once
// and returns once every call has returned.
//
// For fanning out blocking I/O a controller issues in one pass (one API write per node): on a
// busy API server each write waits about a second in its queues, and done one after another a
// pass over 32 nodes took 30 s, long enough for the last agents to give up waiting for their
// grants. Not for CPU-bound work, and not a pool: the threads live for one call.
//
// Thread safety: `work` is called from several threads at once and must be safe for that; it
// must not throw (a worker thread has nowhere to send an exception).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace modelplane::core {

// How many API writes a controller pass has in flight at once: enough to hide a slow API
// server's queueing, few enough not to be a burst that API priority and fairness throttles.
inline constexpr std::size_t kConcurrentApiWrites = 8;

template <typename Work>
void RunConcurrently(std::size_t count, std::size_t limit, Work&& work) {
  const std::size_t threads = std::min(count, std::max<std::size_t>(limit, 1));
  std::atomic<std::size_t> next{0};
  const auto drain = [&] {
    for (std::size_t index = next.fetch_add(1); index < count; index = next.fetch_add(1)) {
      work(index);
    }
  };
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(threads > 0 ? threads - 1 : 0);
    for (std::size_t started = 1; started < threads; ++started) helpers.emplace_back(drain);
    drain();  // the calling thread is one of the workers
  }           // joins the helpers
}

}  // namespace modelplane::core
