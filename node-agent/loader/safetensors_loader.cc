#include "node-agent/loader/safetensors_loader.h"

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <stop_token>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include "node-agent/loader/alignment.h"
#include "node-agent/loader/arena_layout.h"
#include "node-agent/loader/checkpoint_file.h"
#include "node-agent/loader/cuda_runtime.h"
#include "node-agent/loader/gds_reader.h"
#include "node-agent/loader/host_memory.h"
#include "node-agent/loader/read_engine.h"
#include "node-agent/loader/read_pipeline.h"
#include "node-agent/loader/read_plan.h"
#include "node-agent/loader/staging_ring.h"

namespace modelplane::agent {

using core::ErrorCode;
using core::MakeError;

namespace {

// madvise over the whole pages that hold [data, data + length).
int AdvisePages(std::byte* data, std::uint64_t length, std::uint64_t page, int advice) {
  const auto address = reinterpret_cast<std::uintptr_t>(data);
  const std::uint64_t head = address % page;
  return ::madvise(data - head, AlignUp(address + length, page) - (address - head), advice);
}

}  // namespace

struct LoadResult::Owned {
  std::shared_ptr<CudaRuntime> cuda;  // first member: destroyed after the allocations below
  std::vector<HostMapping> host;
  std::vector<DeviceAllocation> device;
};

LoadResult::LoadResult() : owned_(std::make_unique<Owned>()) {}
LoadResult::LoadResult(LoadResult&&) noexcept = default;
LoadResult& LoadResult::operator=(LoadResult&&) noexcept = default;
LoadResult::~LoadResult() = default;

core::Result<std::vector<std::byte>> LoadResult::CopyToHost(const LoadedTensor& tensor) const {
  std::vector<std::byte> bytes(tensor.bytes);
  if (tensor.bytes == 0) return bytes;
  if (device_.kind == DeviceKind::kCpu) {
    std::memcpy(bytes.data(), tensor.data, tensor.bytes);
    return bytes;
  }
  if (device_.kind == DeviceKind::kCuda) {
    const CudaRuntime& cuda = *owned_->cuda;
    if (auto status = cuda.Check(
            cuda.api().Memcpy(bytes.data(), tensor.data, tensor.bytes, kCudaMemcpyDeviceToHost),
            "cudaMemcpy");
        !status) {
      return std::unexpected(status.error());
    }
    return bytes;
  }
  return MakeError(ErrorCode::kInvalidArgument, "device none keeps no tensor bytes");
}

// One load from start to finish: open and validate the files, lay out and allocate the rank's
// tensors, plan the reads, run them, verify the files did not change. The stages themselves
// live in their own files; this class holds what passes between them and times them.
class LoadRun {
 public:
  LoadRun(const std::vector<std::string>& paths, const LoadOptions& options)
      : paths_(paths), options_(options), start_(std::chrono::steady_clock::now()) {}
  LoadRun(const LoadRun&) = delete;
  LoadRun& operator=(const LoadRun&) = delete;

  core::Result<LoadResult> Run() {
    if (auto status = CheckLoadOptions(options_); !status) return std::unexpected(status.error());
    result_.device_ = options_.device;
    LoadStats& stats = result_.stats_;
    stats.device = LoadDeviceName(options_.device);
    stats.rank = options_.rank;
    stats.world_size = options_.world_size;
    stats.request_bytes = options_.request_bytes;
    stats.queue_depth = options_.queue_depth;
    if (auto status = OpenFiles(); !status) return std::unexpected(status.error());
    Stage("headers");
    if (auto status = Layout(); !status) return std::unexpected(status.error());
    Stage("planned");
    if (auto status = Allocate(); !status) return std::unexpected(status.error());
    PlanFileReads();
    Stage("allocated");
    if (auto status = Execute(); !status) return std::unexpected(status.error());
    if (auto status = Verify(); !status) return std::unexpected(status.error());
    Stage("verified");
    stats.seconds = Since();
    gds_.reset();
    return std::move(result_);
  }

 private:
  double Since() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void Stage(std::string name) { result_.stats_.stages.emplace_back(std::move(name), Since()); }
  void Fallback(std::string what) { result_.stats_.fallbacks.push_back(std::move(what)); }
  bool Cpu() const { return options_.device.kind == DeviceKind::kCpu; }

  core::Status OpenFiles() {
    if (paths_.empty()) return MakeError(ErrorCode::kInvalidArgument, "no file to load");
    files_.reserve(paths_.size());
    for (const std::string& path : paths_) {
      auto file = CheckpointFile::Open(path, options_.io_mode, options_.device.kind,
                                       result_.stats_.fallbacks);
      if (!file) return std::unexpected(file.error());
      result_.stats_.header_bytes += file->header_bytes();
      files_.push_back(std::move(*file));
    }
    result_.stats_.files = static_cast<std::uint32_t>(files_.size());
    return core::Ok();
  }

  core::Status Layout() {
    std::vector<LayoutFile> inputs;
    inputs.reserve(files_.size());
    for (const CheckpointFile& file : files_) {
      inputs.push_back(LayoutFile{.path = file.path(), .tensors = file.header().tensors});
    }
    auto layout = PlanArenaLayout(inputs, options_.rules, options_.rank, options_.world_size);
    if (!layout) return std::unexpected(layout.error());
    layout_ = std::move(*layout);
    for (const PlacedTensor& placed : layout_.tensors) {
      result_.tensors_.push_back(LoadedTensor{.name = placed.name,
                                              .dtype = placed.dtype,
                                              .shape = placed.shape,
                                              .bytes = placed.bytes,
                                              .file_index = placed.file});
    }
    result_.stats_.bytes_needed = layout_.bytes_needed;
    result_.stats_.tensors = result_.tensors_.size();
    return core::Ok();
  }

  core::Status Allocate() {
    LoadStats& stats = result_.stats_;
    if (options_.device.kind == DeviceKind::kCuda) {
      auto cuda = CudaRuntime::Load();
      if (!cuda) return std::unexpected(cuda.error());
      result_.owned_->cuda = std::shared_ptr<CudaRuntime>(std::move(*cuda));
      cuda_ = result_.owned_->cuda.get();
      if (options_.device.index >= cuda_->device_count()) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            fmt::format("CUDA device {} of {}", options_.device.index, cuda_->device_count()));
      }
      if (auto status =
              cuda_->Check(cuda_->api().SetDevice(options_.device.index), "cudaSetDevice");
          !status) {
        return status;
      }
      if (options_.gds) OpenGds();
    }
    arenas_.assign(files_.size(), nullptr);
    mappings_.assign(files_.size(), nullptr);
    for (std::size_t f = 0; f < files_.size(); ++f) {
      const CheckpointFile& file = files_[f];
      const std::uint64_t arena_bytes = layout_.files[f].bytes;
      if (file.mapped()) {
        auto mapping = HostMapping::MapFile(file.fd(), file.size());
        if (!mapping) return std::unexpected(mapping.error());
        mappings_[f] = mapping->data();
        result_.owned_->host.push_back(std::move(*mapping));
      }
      if (Cpu()) {
        auto mapping = HostMapping::Allocate(arena_bytes);
        if (!mapping) return std::unexpected(mapping.error());
        arenas_[f] = mapping->data();
        stats.host_output_bytes += arena_bytes;
        result_.owned_->host.push_back(std::move(*mapping));
      } else if (options_.device.kind == DeviceKind::kCuda) {
        auto allocation = DeviceAllocation::Allocate(*cuda_, arena_bytes);
        if (!allocation) return std::unexpected(allocation.error());
        arenas_[f] = allocation->data();
        stats.device_bytes += arena_bytes;
        result_.owned_->device.push_back(std::move(*allocation));
      }
    }
    for (std::size_t i = 0; i < result_.tensors_.size(); ++i) {
      LoadedTensor& tensor = result_.tensors_[i];
      const PlacedTensor& placed = layout_.tensors[i];
      if (tensor.bytes == 0) continue;
      std::byte* arena = arenas_[placed.file];
      tensor.data = arena == nullptr ? nullptr : arena + placed.arena_offset;
      if (files_[placed.file].mapped() && placed.file_begin) {
        tensor.data = mappings_[placed.file] + *placed.file_begin;
      }
    }
    return core::Ok();
  }

  void OpenGds() {
    auto gds = GdsReader::Open(files_, result_.stats_.fallbacks);
    if (!gds) {
      Fallback(fmt::format("GDS unavailable ({}), reading through the pinned ring",
                           gds.error().message()));
      return;
    }
    gds_ = std::move(*gds);
  }

  bool Gds(std::size_t file) const { return gds_ != nullptr && gds_->Registered(file); }

  void PlanFileReads() {
    std::vector<FileReadMode> modes;
    modes.reserve(files_.size());
    for (std::uint32_t f = 0; f < files_.size(); ++f) {
      modes.push_back(
          FileReadMode{.direct = files_[f].direct(), .mapped = files_[f].mapped(), .gds = Gds(f)});
    }
    plan_ = PlanReads(layout_, modes,
                      ReadPlanOptions{.host_destination = Cpu(),
                                      .request_bytes = options_.request_bytes,
                                      .coalesce_gap_bytes = options_.coalesce_gap_bytes});
  }

  core::Status Execute() {
    LoadStats& stats = result_.stats_;
    auto engine = CreateReadEngine(options_.engine, options_.queue_depth);
    if (!engine) return std::unexpected(engine.error());
    if (options_.engine == EngineKind::kAuto && (*engine)->name() != "io_uring") {
      Fallback("io_uring unavailable, reading with a pread thread pool");
    }
    engine_ = std::move(*engine);
    stats.engine = std::string(engine_->name());
    for (std::size_t f = 0; f < files_.size(); ++f) {
      if (files_[f].mapped()) ++stats.files_mapped;
      if (Gds(f)) {
        ++stats.files_gds;
      } else if (files_[f].direct()) {
        ++stats.files_direct;
      } else {
        ++stats.files_buffered;
      }
    }
    if (auto status = PrepareRing(); !status) return status;
    std::thread gds_thread;
    core::Status gds_status = core::Ok();
    std::uint64_t gds_bytes = 0;
    if (!plan_.gds_reads.empty()) {
      gds_thread = std::thread([this, &gds_status, &gds_bytes] {
        gds_status = gds_->Read(plan_.gds_reads, files_, arenas_, options_.queue_depth, gds_bytes);
      });
    }
    // Fresh anonymous memory is faulted in and zeroed on first touch, which an O_DIRECT read
    // does inside io_uring_submit: the device idles while the kernel zeroes 4 GiB. Faulting
    // the destinations in on another thread, ahead of the reads, overlaps that with the I/O.
    // MADV_POPULATE_WRITE never changes bytes, so racing a finished read is harmless.
    std::jthread prefault;
    if (Cpu()) prefault = std::jthread([this](const std::stop_token& stop) { Prefault(stop); });
    ReadPipeline pipeline(*engine_, ring_.get(), files_, arenas_, stats);
    core::Status status = pipeline.Run(
        plan_.reads, options_.queue_depth, [this] { Stage("first_read"); }, options_.on_progress);
    if (prefault.joinable()) {
      prefault.request_stop();
      prefault.join();
    }
    if (gds_thread.joinable()) gds_thread.join();
    if (!status) return status;
    if (!gds_status) return gds_status;
    if (auto populated = PopulateMapped(); !populated) return populated;
    stats.bytes_read += gds_bytes;
    for (const ReadOp& op : plan_.gds_reads) stats.CountRequest(op.length);
    Stage("reads_done");
    if (cuda_ != nullptr) {
      if (ring_ != nullptr) {
        if (auto synced = ring_->Synchronize(); !synced) return synced;
      }
      Stage("copies_done");
    }
    ring_.reset();
    return core::Ok();
  }

  // Only a plan with staged reads gets a ring; every load counts its headers as staging.
  core::Status PrepareRing() {
    LoadStats& stats = result_.stats_;
    stats.host_staging_bytes = stats.header_bytes;
    if (!plan_.Staged()) return core::Ok();
    const std::uint64_t ring_bytes =
        options_.ring_bytes != 0 ? options_.ring_bytes
                                 : std::uint64_t{options_.queue_depth} * options_.request_bytes;
    auto ring = StagingRing::Create(StagingRing::Options{.slot_bytes = options_.request_bytes,
                                                         .ring_bytes = ring_bytes,
                                                         .cuda_streams = options_.cuda_streams},
                                    cuda_, stats);
    if (!ring) return std::unexpected(ring.error());
    ring_ = std::move(*ring);
    return core::Ok();
  }

  // Maps the cached pages of mapped runs into the process now (reading any that left the
  // cache), so the load ends with every byte resident, as a copying load would.
  core::Status PopulateMapped() {
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    for (const MappedRange& range : plan_.mapped) {
      std::byte* data = mappings_[range.file] + range.offset;
#ifdef MADV_POPULATE_READ
      if (AdvisePages(data, range.length, page, MADV_POPULATE_READ) != 0) {
        return MakeError(ErrorCode::kIo, fmt::format("populating a file mapping: {}",
                                                     std::system_category().message(errno)));
      }
#else
      AdvisePages(data, range.length, page, MADV_WILLNEED);
#endif
      result_.stats_.bytes_read += range.length;
    }
    return core::Ok();
  }

  void Prefault(const std::stop_token& stop) {
#ifdef MADV_POPULATE_WRITE
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    for (const ReadOp& op : plan_.reads) {
      if (stop.stop_requested()) return;
      if (op.staged) continue;
      if (AdvisePages(arenas_[op.file] + op.destination, op.length, page, MADV_POPULATE_WRITE) !=
          0) {
        return;  // an older kernel: the reads fault their pages in themselves
      }
    }
#else
    (void)stop;
#endif
  }

  core::Status Verify() {
    for (const CheckpointFile& file : files_) {
      if (auto status = file.VerifyUnchanged(); !status) return status;
    }
    return core::Ok();
  }

  const std::vector<std::string>& paths_;
  const LoadOptions& options_;
  const std::chrono::steady_clock::time_point start_;
  // Destroyed last (members go in reverse), so the CUDA runtime and the arenas it owns outlive
  // the ring's streams and the GDS registrations of a failed load.
  LoadResult result_;
  std::vector<CheckpointFile> files_;
  ArenaLayout layout_;
  ReadPlan plan_;
  std::vector<std::byte*> arenas_;    // per file; nullptr on device none
  std::vector<std::byte*> mappings_;  // per file; the file's mapping where it is mapped
  CudaRuntime* cuda_ = nullptr;
  std::unique_ptr<ReadEngine> engine_;
  std::unique_ptr<GdsReader> gds_;
  std::unique_ptr<StagingRing> ring_;  // destroyed first: its streams end before the rest goes
};

core::Result<LoadResult> LoadSafetensors(const std::vector<std::string>& files,
                                         const LoadOptions& options) {
  LoadRun run(files, options);
  return run.Run();
}

}  // namespace modelplane::agent
