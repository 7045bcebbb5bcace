#include "node-agent/loader/gds_reader.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include <fmt/format.h>

namespace modelplane::agent {

core::Result<std::unique_ptr<GdsReader>> GdsReader::Open(std::span<const CheckpointFile> files,
                                                         std::vector<std::string>& fallbacks) {
  auto cufile = CuFile::Load();
  if (!cufile) return std::unexpected(cufile.error());
  // The constructor is private: make_unique cannot reach it.
  std::unique_ptr<GdsReader> reader(new GdsReader(std::move(*cufile)));
  reader->handles_.assign(files.size(), nullptr);
  for (std::size_t f = 0; f < files.size(); ++f) {
    const CheckpointFile& file = files[f];
    if (!file.direct()) {
      fallbacks.push_back(
          fmt::format("{}: no O_DIRECT, so no GDS; reading through the pinned ring", file.path()));
      continue;
    }
    auto handle = reader->cufile_->Register(file.direct_fd());
    if (!handle) {
      fallbacks.push_back(fmt::format("{}: {}; reading through the pinned ring", file.path(),
                                      handle.error().message()));
      continue;
    }
    reader->handles_[f] = *handle;
  }
  return reader;
}

GdsReader::~GdsReader() {
  for (CuFileHandle handle : handles_) {
    if (handle != nullptr) cufile_->Deregister(handle);
  }
}

core::Status GdsReader::Read(std::span<const ReadOp> reads, std::span<const CheckpointFile> files,
                             std::span<std::byte* const> arenas, std::uint32_t threads,
                             std::uint64_t& bytes) const {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  core::Status status = core::Ok();
  std::vector<std::thread> workers;
  for (std::uint32_t w = 0; w < threads; ++w) {
    workers.emplace_back([&] {
      for (std::size_t i = next++; i < reads.size(); i = next++) {
        const ReadOp& op = reads[i];
        const CheckpointFile& file = files[op.file];
        const ssize_t got = cufile_->api().Read(handles_[op.file], arenas[op.file] + op.destination,
                                                op.length, static_cast<off_t>(op.offset), 0);
        const std::lock_guard lock(mutex);
        const std::uint64_t expected = std::min(op.offset + op.length, file.size()) - op.offset;
        if (got < 0 || static_cast<std::uint64_t>(got) < expected) {
          if (status) {
            status = core::MakeError(
                got < 0 ? core::ErrorCode::kIo : core::ErrorCode::kDataLoss,
                fmt::format("cuFileRead {} at {}: returned {}", file.path(), op.offset, got));
          }
          return;
        }
        bytes += static_cast<std::uint64_t>(got);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  return status;
}

}  // namespace modelplane::agent
