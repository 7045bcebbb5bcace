#include "node-agent/fetch/fetch_engine.h"

#include <fmt/format.h>

#include "node-agent/fetch/fetch_run.h"

namespace modelplane::agent {

core::Result<std::unique_ptr<FetchEngine>> FetchEngine::Create(FetchOptions options,
                                                               Dependencies dependencies) {
  if (options.range_size == 0 || options.range_size % kDirectIoAlignment != 0) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("range size {} must be a positive multiple of {}",
                                       options.range_size, kDirectIoAlignment));
  }
  if (options.buffer_pool_bytes < options.range_size || options.max_in_flight == 0 ||
      options.files_in_flight == 0 || options.attempts_per_source < 1) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "the buffer pool must hold at least one range, and in-flight and "
                           "attempt limits must be positive");
  }
  if (dependencies.store == nullptr || dependencies.health == nullptr ||
      dependencies.clock == nullptr) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "the fetch engine needs a store, a source health record and a clock");
  }
  auto pool = BufferPool::Create(
      options.range_size, static_cast<std::size_t>(options.buffer_pool_bytes / options.range_size));
  if (!pool) return std::unexpected(pool.error());
  return std::unique_ptr<FetchEngine>(new FetchEngine(options, dependencies, std::move(*pool)));
}

FetchEngine::FetchEngine(FetchOptions options, Dependencies dependencies,
                         std::unique_ptr<BufferPool> pool)
    : options_(options), dependencies_(dependencies), pool_(std::move(pool)) {}

FetchEngine::~FetchEngine() = default;

core::Result<FetchReport> FetchEngine::Fetch(const FetchRequest& request,
                                             core::CancellationToken& cancel,
                                             const ProgressCallback& progress,
                                             FetchReport* report_out) {
  Run run(*this, request, cancel, progress);
  return run.Execute(report_out);
}

}  // namespace modelplane::agent
