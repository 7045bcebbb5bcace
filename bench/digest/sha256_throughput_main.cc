// Measures core::Sha256 throughput the way `openssl speed -evp sha256 -bytes N` does: one
// buffer of N bytes hashed over and over for a fixed time, so the two numbers compare directly.
// Prints one JSON object with bytes per wall-clock second and bytes per CPU second of this
// thread. `openssl speed` reports per user-CPU second unless given -elapsed, so the CPU figure is
// the like-for-like one on a machine where other work competes for the cores.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <time.h>

#include "core/digest/sha256.h"

int main(int argc, char** argv) {
  CLI::App app{"SHA-256 throughput of modelplane's streaming hasher"};
  std::size_t block_bytes = 16384;
  double seconds = 3.0;
  app.add_option("--block-bytes", block_bytes, "bytes per Update call")
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("--seconds", seconds, "how long to hash")->check(CLI::Range(0.1, 600.0));
  CLI11_PARSE(app, argc, argv);

  auto hasher = modelplane::core::Sha256::Create();
  if (!hasher) {
    std::fprintf(stderr, "%s\n", hasher.error().ToString().c_str());
    return 1;
  }
  const std::string block(block_bytes, 'x');
  using Clock = std::chrono::steady_clock;
  auto thread_cpu_seconds = [] {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
  };
  const double cpu_start = thread_cpu_seconds();
  const auto start = Clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
  std::size_t bytes = 0;
  // Check the clock every few MiB only, so the measurement is the hash, not the clock.
  const std::size_t updates_per_check = std::max<std::size_t>(1, (4u << 20) / block_bytes);
  while (Clock::now() < until) {
    for (std::size_t i = 0; i < updates_per_check; ++i) hasher->Update(block);
    bytes += updates_per_check * block_bytes;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu = thread_cpu_seconds() - cpu_start;
  const auto digest = hasher->Finish();
  std::printf(
      "{\"block_bytes\": %zu, \"bytes_per_second\": %.0f, \"bytes_per_cpu_second\": %.0f, "
      "\"seconds\": %.3f, \"digest\": \"%s\"}\n",
      block_bytes, static_cast<double>(bytes) / elapsed, static_cast<double>(bytes) / cpu, elapsed,
      modelplane::core::ToHex(digest).substr(0, 16).c_str());
  return 0;
}
