// GPUDirect Storage for a load: cuFile reads of O_DIRECT files straight into device memory,
// no host buffer between. Opening loads cuFile (cufile.h) and registers each file the load
// reads with O_DIRECT; a file cuFile cannot serve (no nvidia-fs, tmpfs, overlayfs) is left to
// the pinned ring, the reason added to the load's fallbacks, and so is a file without O_DIRECT.
//
// cuFileRead is synchronous, so Read keeps `threads` requests at the device with that many
// threads, each taking the next planned read. Only the CPU-side paths (cuFile absent) run in
// the tests here; the reads themselves need a GPU (bench/loader/gpu-check.sh).
//
// Thread safety: Read runs its own threads and returns when they are done; the rest is for
// the one thread that runs the load. Destruction deregisters the files, then closes cuFile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/error/error.h"
#include "node-agent/loader/checkpoint_file.h"
#include "node-agent/loader/cufile.h"
#include "node-agent/loader/read_plan.h"

namespace modelplane::agent {

class GdsReader {
 public:
  // kUnavailable when cuFile cannot be loaded; per-file refusals go to `fallbacks`.
  [[nodiscard]] static core::Result<std::unique_ptr<GdsReader>> Open(
      std::span<const CheckpointFile> files, std::vector<std::string>& fallbacks);
  ~GdsReader();
  GdsReader(const GdsReader&) = delete;
  GdsReader& operator=(const GdsReader&) = delete;

  [[nodiscard]] bool Registered(std::size_t file) const { return handles_[file] != nullptr; }

  // Reads each of `reads` (unstaged, of registered files) to its place in its file's arena
  // (`arenas`, device memory, one per file); `bytes` gets the bytes read. The first failure
  // is returned: kIo for an error, kDataLoss for a file that ended early.
  [[nodiscard]] core::Status Read(std::span<const ReadOp> reads,
                                  std::span<const CheckpointFile> files,
                                  std::span<std::byte* const> arenas, std::uint32_t threads,
                                  std::uint64_t& bytes) const;

 private:
  explicit GdsReader(std::unique_ptr<CuFile> cufile) : cufile_(std::move(cufile)) {}

  std::unique_ptr<CuFile> cufile_;
  std::vector<CuFileHandle> handles_;  // one per file; nullptr where not registered
};

}  // namespace modelplane::agent
