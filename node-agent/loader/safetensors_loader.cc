#include "node-agent/loader/safetensors_loader.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/io/unique_fd.h"
#include "core/safetensors/safetensors_header.h"
#include "node-agent/loader/cuda_runtime.h"
#include "node-agent/loader/cufile.h"
#include "node-agent/loader/host_memory.h"

namespace modelplane::agent {

using core::ErrorCode;
using core::MakeError;

namespace {

// Column-split chunks at least this long are read straight into place on buffered files
// rather than staged: the request is big enough that its count does not matter.
constexpr std::uint64_t kDirectChunkMinBytes = 64u << 10;
// Device allocations are aligned like the file's 4 KiB blocks so a file range and its place
// in the arena agree modulo the block size (needed by O_DIRECT and GDS alike).
constexpr std::uint64_t kRegionAlignment = kDirectAlignment;

std::uint64_t AlignDown(std::uint64_t value, std::uint64_t alignment) {
  return value / alignment * alignment;
}
std::uint64_t AlignUp(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

core::Status ReadExactly(int fd, std::byte* buffer, std::uint64_t length, std::uint64_t offset,
                         const std::string& path) {
  std::uint64_t done = 0;
  while (done < length) {
    const ssize_t result =
        ::pread(fd, buffer + done, length - done, static_cast<off_t>(offset + done));
    if (result < 0 && errno == EINTR) continue;
    if (result < 0) {
      return MakeError(ErrorCode::kIo,
                       fmt::format("reading {}: {}", path, std::system_category().message(errno)));
    }
    if (result == 0) {
      return MakeError(
          ErrorCode::kDataLoss,
          fmt::format("{} ended at byte {} while reading its header", path, offset + done));
    }
    done += static_cast<std::uint64_t>(result);
  }
  return core::Ok();
}

bool SameFile(const struct stat& before, const struct stat& after) {
  return before.st_size == after.st_size && before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
         before.st_mtim.tv_nsec == after.st_mtim.tv_nsec && before.st_ino == after.st_ino;
}

// Fraction of the file's pages in the page cache, from mincore over a mapping that is never
// touched (so nothing is read in by asking). 256 pages spread over the file are asked about,
// not all: mincore walks the page cache page by page, and asking about all of a 4 GiB
// checkpoint took longer than mapping it (70 ms).
double ResidentFraction(int fd, std::uint64_t size) {
  constexpr std::uint64_t kSamples = 256;
  if (size == 0) return 0;
  void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED) return 0;
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t pages = (size + page - 1) / page;
  const std::uint64_t step = std::max<std::uint64_t>(1, pages / kSamples);
  std::uint64_t asked = 0;
  std::uint64_t resident = 0;
  for (std::uint64_t index = 0; index < pages; index += step) {
    unsigned char bit = 0;
    if (::mincore(static_cast<std::byte*>(mapping) + index * page, page, &bit) != 0) break;
    ++asked;
    resident += bit & 1;
  }
  ::munmap(mapping, size);
  return asked == 0 ? 0 : static_cast<double>(resident) / static_cast<double>(asked);
}

struct FileState {
  std::string path;
  core::UniqueFd fd;
  core::UniqueFd direct_fd;
  bool direct = false;
  bool mapped = false;  // in the page cache: contiguous tensors are views of a file mapping
  std::byte* mapping = nullptr;
  struct stat info {};
  core::SafetensorsHeader header;
  CuFileHandle gds = nullptr;
  std::byte* arena = nullptr;
  std::uint64_t arena_bytes = 0;

  [[nodiscard]] int ReadFd() const { return direct ? direct_fd.get() : fd.get(); }
  [[nodiscard]] std::uint64_t Alignment() const { return direct ? kDirectAlignment : 1; }
};

// A tensor range the rank needs: contiguous ones are merged into runs read straight into
// place; the chunks of column splits are scattered from staged reads.
struct FileRun {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t region_offset = 0;  // where AlignDown(begin) lands in the file's arena
};

struct StridedTensor {
  std::size_t tensor = 0;  // index into the result's tensors
  TensorSlice slice;
};

struct Piece {
  std::uint64_t slot_offset = 0;
  std::uint64_t length = 0;
  std::byte* destination = nullptr;  // nullptr: device "none", drop the bytes
};

struct ReadOp {
  std::uint32_t file = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::byte* destination = nullptr;  // read straight here; nullptr: staged in a ring slot
  std::vector<Piece> pieces;         // staged reads: where the slot's bytes go
};

struct InFlight {
  std::size_t op = 0;
  int slot = -1;
  int fd = -1;
  std::byte* buffer = nullptr;
  std::uint64_t done = 0;
  std::uint64_t expected = 0;
};

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

core::Result<LoadDevice> ParseLoadDevice(std::string_view text) {
  if (text == "cpu") return LoadDevice{.kind = DeviceKind::kCpu};
  if (text == "none") return LoadDevice{.kind = DeviceKind::kNone};
  if (text == "cuda") return LoadDevice{.kind = DeviceKind::kCuda};
  if (text.starts_with("cuda:")) {
    int index = 0;
    const std::string_view number = text.substr(5);
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), index);
    if (error == std::errc() && end == number.data() + number.size() && index >= 0) {
      return LoadDevice{.kind = DeviceKind::kCuda, .index = index};
    }
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("device '{}' is not cpu, none, cuda or cuda:N", text));
}

std::string LoadDeviceName(const LoadDevice& device) {
  switch (device.kind) {
    case DeviceKind::kCpu: return "cpu";
    case DeviceKind::kNone: return "none";
    case DeviceKind::kCuda: return fmt::format("cuda:{}", device.index);
  }
  return "unknown";
}

core::Result<IoMode> ParseIoMode(std::string_view text) {
  if (text == "auto") return IoMode::kAuto;
  if (text == "direct") return IoMode::kDirect;
  if (text == "buffered") return IoMode::kBuffered;
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("I/O mode '{}' is not auto, direct or buffered", text));
}

core::Result<std::vector<std::string>> ResolveCheckpointFiles(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path given(path);
  fs::path index;
  if (fs::is_directory(given, error)) {
    if (fs::exists(given / "model.safetensors.index.json", error)) {
      index = given / "model.safetensors.index.json";
    } else {
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(given, error)) {
        if (entry.path().extension() == ".safetensors" && entry.is_regular_file(error)) {
          files.push_back(entry.path().string());
        }
      }
      if (error) {
        return MakeError(ErrorCode::kIo, fmt::format("listing {}: {}", path, error.message()));
      }
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        return MakeError(ErrorCode::kNotFound, fmt::format("no .safetensors file in {}", path));
      }
      return files;
    }
  } else if (path.ends_with(".json")) {
    index = given;
  } else {
    if (!fs::exists(given, error)) {
      return MakeError(ErrorCode::kNotFound, fmt::format("{} does not exist", path));
    }
    return std::vector<std::string>{path};
  }
  std::ifstream stream(index);
  if (!stream)
    return MakeError(ErrorCode::kNotFound, fmt::format("cannot open {}", index.string()));
  const nlohmann::json json = nlohmann::json::parse(stream, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} has no weight_map object", index.string()));
  }
  std::set<std::string> shards;
  for (const auto& [name, shard] : json["weight_map"].items()) {
    if (!shard.is_string()) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: weight_map entry {} is not a string", index.string(), name));
    }
    const std::string shard_name = shard.get<std::string>();
    if (shard_name.find('/') != std::string::npos || shard_name.starts_with(".")) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: shard name '{}' leaves the folder", index.string(), shard_name));
    }
    shards.insert(shard_name);
  }
  std::vector<std::string> files;
  for (const std::string& shard : shards) files.push_back((index.parent_path() / shard).string());
  return files;
}

// One load from start to finish; a class so the pipeline's state is not a dozen parameters.
class LoadRun {
 public:
  LoadRun(const std::vector<std::string>& paths, const LoadOptions& options)
      : paths_(paths), options_(options), start_(std::chrono::steady_clock::now()) {}
  LoadRun(const LoadRun&) = delete;
  LoadRun& operator=(const LoadRun&) = delete;
  // Error paths leave the ring, streams and GDS handles to this.
  ~LoadRun() {
    ReleaseRing();
    for (FileState& file : files_) {
      if (file.gds != nullptr) cufile_->Deregister(file.gds);
    }
  }

  core::Result<LoadResult> Run() {
    if (auto status = CheckOptions(); !status) return std::unexpected(status.error());
    result_.device_ = options_.device;
    LoadStats& stats = result_.stats_;
    stats.device = LoadDeviceName(options_.device);
    stats.rank = options_.rank;
    stats.world_size = options_.world_size;
    stats.request_bytes = options_.request_bytes;
    stats.queue_depth = options_.queue_depth;
    if (auto status = OpenFiles(); !status) return std::unexpected(status.error());
    Stage("headers");
    if (auto status = Plan(); !status) return std::unexpected(status.error());
    Stage("planned");
    if (auto status = Allocate(); !status) return std::unexpected(status.error());
    BuildOps();
    Stage("allocated");
    if (auto status = Execute(); !status) return std::unexpected(status.error());
    if (auto status = Verify(); !status) return std::unexpected(status.error());
    Stage("verified");
    stats.seconds = Since();
    for (FileState& file : files_) {
      if (file.gds != nullptr) cufile_->Deregister(file.gds);
      file.gds = nullptr;
    }
    return std::move(result_);
  }

 private:
  double Since() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void Stage(std::string name) { result_.stats_.stages.emplace_back(std::move(name), Since()); }
  void Fallback(std::string what) { result_.stats_.fallbacks.push_back(std::move(what)); }

  core::Status CheckOptions() const {
    if (options_.world_size == 0 || options_.rank >= options_.world_size) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("rank {} is outside world size {}", options_.rank, options_.world_size));
    }
    if (options_.request_bytes < kDirectAlignment ||
        options_.request_bytes % kDirectAlignment != 0 || options_.request_bytes > (1u << 30)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("request size {} is not a multiple of 4096 up to 1 GiB",
                                   options_.request_bytes));
    }
    if (options_.queue_depth == 0 || options_.queue_depth > 1024) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("queue depth {} is outside [1, 1024]", options_.queue_depth));
    }
    if (options_.cuda_streams == 0 || options_.cuda_streams > 64) {
      return MakeError(ErrorCode::kInvalidArgument, "CUDA streams must be in [1, 64]");
    }
    return core::Ok();
  }

  core::Status OpenFiles() {
    if (paths_.empty()) return MakeError(ErrorCode::kInvalidArgument, "no file to load");
    files_.reserve(paths_.size());
    for (const std::string& path : paths_) {
      FileState file;
      file.path = path;
      file.fd = core::UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!file.fd.valid()) {
        const int error = errno;
        return MakeError(
            error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
            fmt::format("opening {}: {}", path, std::system_category().message(error)));
      }
      if (::fstat(file.fd.get(), &file.info) != 0) {
        return MakeError(ErrorCode::kIo,
                         fmt::format("stat {}: {}", path, std::system_category().message(errno)));
      }
      if (!S_ISREG(file.info.st_mode)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("{} is not a regular file", path));
      }
      const auto size = static_cast<std::uint64_t>(file.info.st_size);
      // The whole header is validated before the tensors' memory is planned or allocated;
      // the header buffer itself is bounded by the length check against limit and file size.
      std::array<std::byte, core::kSafetensorsLengthPrefixBytes> prefix{};
      if (size < prefix.size()) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            fmt::format("{}: {} bytes is too short for a safetensors file", path, size));
      }
      if (auto status = ReadExactly(file.fd.get(), prefix.data(), prefix.size(), 0, path);
          !status) {
        return std::unexpected(status.error());
      }
      auto length = core::ParseSafetensorsHeaderLength(prefix, size);
      if (!length) return std::unexpected(length.error().Wrap(path));
      std::vector<std::byte> header(prefix.size() + *length);
      std::memcpy(header.data(), prefix.data(), prefix.size());
      if (auto status = ReadExactly(file.fd.get(), header.data() + prefix.size(), *length,
                                    prefix.size(), path);
          !status) {
        return std::unexpected(status.error());
      }
      auto parsed = core::ParseSafetensorsHeader(header, size);
      if (!parsed) return std::unexpected(parsed.error().Wrap(path));
      file.header = std::move(*parsed);
      result_.stats_.header_bytes += header.size();
      ChooseIoMode(file);
      files_.push_back(std::move(file));
    }
    result_.stats_.files = static_cast<std::uint32_t>(files_.size());
    return core::Ok();
  }

  void ChooseIoMode(FileState& file) {
    if (options_.io_mode == IoMode::kBuffered) return;
    const auto size = static_cast<std::uint64_t>(file.info.st_size);
    if (options_.io_mode == IoMode::kAuto && ResidentFraction(file.fd.get(), size) >= 0.5) {
      // Mostly in the page cache: O_DIRECT would go to the device for bytes already in memory.
      // On the CPU the cached pages themselves become the tensors (a private mapping, as
      // safetensors does), which beats copying them into fresh memory; elsewhere they are
      // read buffered.
      file.mapped = options_.device.kind == DeviceKind::kCpu;
      return;
    }
    file.direct_fd = core::UniqueFd(::open(file.path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT));
    if (!file.direct_fd.valid()) {
      Fallback(fmt::format("{}: O_DIRECT refused ({}), reading through the page cache", file.path,
                           std::system_category().message(errno)));
      return;
    }
    struct stat direct_info {};
    if (::fstat(file.direct_fd.get(), &direct_info) != 0 ||
        direct_info.st_ino != file.info.st_ino || direct_info.st_dev != file.info.st_dev) {
      // Replaced between the two opens: the verify step reports it; read through one fd.
      file.direct_fd.Reset();
      return;
    }
    file.direct = true;
  }

  core::Status Plan() {
    LoadStats& stats = result_.stats_;
    runs_.resize(files_.size());
    strided_.resize(files_.size());
    for (std::uint32_t f = 0; f < files_.size(); ++f) {
      FileState& file = files_[f];
      std::uint64_t cursor = 0;
      for (const core::TensorInfo& info : file.header.tensors) {
        auto slice = PlanTensorSlice(info, options_.rules, options_.rank, options_.world_size);
        if (!slice) return std::unexpected(slice.error().Wrap(file.path));
        if (!*slice) continue;
        const std::size_t index = result_.tensors_.size();
        result_.tensors_.push_back(LoadedTensor{.name = info.name,
                                                .dtype = info.dtype,
                                                .shape = (*slice)->shape,
                                                .bytes = (*slice)->output_bytes,
                                                .file_index = f});
        tensor_offsets_.push_back(0);
        tensor_file_begin_.emplace_back();
        stats.bytes_needed += (*slice)->output_bytes;
        if ((*slice)->output_bytes == 0) continue;
        if ((*slice)->Contiguous()) {
          const std::uint64_t begin = (*slice)->first_file_offset;
          const std::uint64_t end = begin + (*slice)->output_bytes;
          std::vector<FileRun>& runs = runs_[f];
          if (runs.empty() || runs.back().end != begin) runs.push_back(FileRun{.begin = begin});
          runs.back().end = end;
          tensor_file_begin_[index] = begin;
          run_tensors_.push_back(
              RunTensor{.file = f, .run = runs.size() - 1, .tensor = index, .file_begin = begin});
        } else {
          strided_[f].push_back(StridedTensor{.tensor = index, .slice = **slice});
        }
      }
      // Arena layout: each run mirrors its file range from the block boundary below it, so a
      // block-aligned read lands block-aligned; each strided tensor gets its own region.
      for (FileRun& run : runs_[f]) {
        run.region_offset = cursor;
        cursor += AlignUp(run.end, kRegionAlignment) - AlignDown(run.begin, kRegionAlignment);
      }
      for (const StridedTensor& strided : strided_[f]) {
        tensor_offsets_[strided.tensor] = cursor;
        cursor += AlignUp(strided.slice.output_bytes, kRegionAlignment);
      }
      file.arena_bytes = cursor;
    }
    for (const RunTensor& entry : run_tensors_) {
      const FileRun& run = runs_[entry.file][entry.run];
      tensor_offsets_[entry.tensor] =
          run.region_offset + (entry.file_begin - AlignDown(run.begin, kRegionAlignment));
    }
    stats.tensors = result_.tensors_.size();
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
    for (FileState& file : files_) {
      if (file.mapped) {
        auto mapping =
            HostMapping::MapFile(file.fd.get(), static_cast<std::uint64_t>(file.info.st_size));
        if (!mapping) return std::unexpected(mapping.error());
        file.mapping = mapping->data();
        result_.owned_->host.push_back(std::move(*mapping));
      }
      if (options_.device.kind == DeviceKind::kCpu) {
        auto mapping = HostMapping::Allocate(file.arena_bytes);
        if (!mapping) return std::unexpected(mapping.error());
        file.arena = mapping->data();
        stats.host_output_bytes += file.arena_bytes;
        result_.owned_->host.push_back(std::move(*mapping));
      } else if (options_.device.kind == DeviceKind::kCuda) {
        auto allocation = DeviceAllocation::Allocate(*cuda_, file.arena_bytes);
        if (!allocation) return std::unexpected(allocation.error());
        file.arena = allocation->data();
        stats.device_bytes += file.arena_bytes;
        result_.owned_->device.push_back(std::move(*allocation));
      }
    }
    for (std::size_t i = 0; i < result_.tensors_.size(); ++i) {
      LoadedTensor& tensor = result_.tensors_[i];
      if (tensor.bytes == 0) continue;
      std::byte* arena = files_[tensor.file_index].arena;
      tensor.data = arena == nullptr ? nullptr : arena + tensor_offsets_[i];
      if (files_[tensor.file_index].mapped && tensor_file_begin_[i]) {
        tensor.data = files_[tensor.file_index].mapping + *tensor_file_begin_[i];
      }
    }
    return core::Ok();
  }

  void OpenGds() {
    auto cufile = CuFile::Load();
    if (!cufile) {
      Fallback(fmt::format("GDS unavailable ({}), reading through the pinned ring",
                           cufile.error().message()));
      return;
    }
    cufile_ = std::move(*cufile);
    for (FileState& file : files_) {
      if (!file.direct) {
        Fallback(
            fmt::format("{}: no O_DIRECT, so no GDS; reading through the pinned ring", file.path));
        continue;
      }
      auto handle = cufile_->Register(file.direct_fd.get());
      if (!handle) {
        Fallback(fmt::format("{}: {}; reading through the pinned ring", file.path,
                             handle.error().message()));
        continue;
      }
      file.gds = *handle;
    }
  }

  std::uint64_t SlotBytes() const { return options_.request_bytes; }

  // Appends reads of [begin, end) of file f straight into `destination` (which holds the
  // aligned range), in requests of at most request_bytes.
  void AddDirectReads(std::uint32_t f, std::uint64_t begin, std::uint64_t end,
                      std::byte* destination, std::vector<ReadOp>& ops) {
    for (std::uint64_t at = begin; at < end; at += options_.request_bytes) {
      ops.push_back(ReadOp{.file = f,
                           .offset = at,
                           .length = std::min<std::uint64_t>(options_.request_bytes, end - at),
                           .destination = destination + (at - begin)});
    }
  }

  // Appends staged reads of [begin, end) of file f whose bytes go, in order, to
  // `destination` (nullptr: dropped).
  void AddStagedReads(std::uint32_t f, std::uint64_t begin, std::uint64_t end,
                      std::byte* destination) {
    for (std::uint64_t at = begin; at < end; at += SlotBytes()) {
      const std::uint64_t length = std::min<std::uint64_t>(SlotBytes(), end - at);
      ops_.push_back(ReadOp{
          .file = f,
          .offset = at,
          .length = length,
          .pieces = {Piece{
              .slot_offset = 0,
              .length = length,
              .destination = destination == nullptr ? nullptr : destination + (at - begin)}}});
    }
  }

  void BuildOps() {
    const bool cpu = options_.device.kind == DeviceKind::kCpu;
    for (std::uint32_t f = 0; f < files_.size(); ++f) {
      const FileState& file = files_[f];
      const std::uint64_t alignment = file.Alignment();
      for (const FileRun& run : runs_[f]) {
        const std::uint64_t begin = AlignDown(run.begin, alignment);
        const std::uint64_t end = AlignUp(run.end, alignment);
        std::byte* destination =
            file.arena == nullptr
                ? nullptr
                : file.arena + run.region_offset + (begin - AlignDown(run.begin, kRegionAlignment));
        if (file.mapped) {
          populate_.emplace_back(file.mapping + run.begin, run.end - run.begin);
        } else if (cpu) {
          AddDirectReads(f, begin, end, destination, ops_);
        } else if (file.gds != nullptr) {
          AddDirectReads(f, begin, end, destination, gds_ops_);
        } else {
          AddStagedReads(f, begin, end, destination);
        }
      }
      for (const StridedTensor& strided : strided_[f]) BuildStridedOps(f, strided);
    }
  }

  // A column split: chunk_count chunks of chunk_bytes, file_stride apart. Large chunks of a
  // buffered file on the CPU are read in place; the rest are coalesced into slot-sized
  // staged reads (gaps up to coalesce_gap_bytes are read and dropped).
  void BuildStridedOps(std::uint32_t f, const StridedTensor& strided) {
    const FileState& file = files_[f];
    const TensorSlice& slice = strided.slice;
    std::byte* output = result_.tensors_[strided.tensor].data;
    const std::uint64_t alignment = file.Alignment();
    if (options_.device.kind == DeviceKind::kCpu && !file.direct &&
        slice.chunk_bytes >= kDirectChunkMinBytes) {
      for (std::uint64_t i = 0; i < slice.chunk_count; ++i) {
        const ByteChunk chunk = slice.Chunk(i);
        AddDirectReads(f, chunk.file_offset, chunk.file_offset + chunk.length,
                       output + chunk.output_offset, ops_);
      }
      return;
    }
    const std::uint64_t part_limit = SlotBytes() - kDirectAlignment;
    std::optional<ReadOp> current;
    std::uint64_t current_end = 0;  // end of the last piece in `current`
    auto flush = [&] {
      if (!current) return;
      current->length = AlignUp(current_end, alignment) - current->offset;
      ops_.push_back(std::move(*current));
      current.reset();
    };
    for (std::uint64_t i = 0; i < slice.chunk_count; ++i) {
      const ByteChunk chunk = slice.Chunk(i);
      for (std::uint64_t done = 0; done < chunk.length; done += part_limit) {
        const std::uint64_t offset = chunk.file_offset + done;
        const std::uint64_t length = std::min(part_limit, chunk.length - done);
        // The gap counts in blocks actually read: chunks sharing a 4 KiB block under O_DIRECT
        // cost nothing extra together, and reading that block once per chunk would.
        if (current && (AlignDown(offset, alignment) >
                            AlignUp(current_end, alignment) + options_.coalesce_gap_bytes ||
                        AlignUp(offset + length, alignment) - current->offset > SlotBytes())) {
          flush();
        }
        if (!current) {
          current = ReadOp{.file = f, .offset = AlignDown(offset, alignment)};
        }
        current->pieces.push_back(Piece{
            .slot_offset = offset - current->offset,
            .length = length,
            .destination = output == nullptr ? nullptr : output + chunk.output_offset + done});
        current_end = offset + length;
      }
    }
    flush();
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
    for (const FileState& file : files_) {
      if (file.mapped) ++stats.files_mapped;
      if (file.gds != nullptr) {
        ++stats.files_gds;
      } else if (file.direct) {
        ++stats.files_direct;
      } else {
        ++stats.files_buffered;
      }
    }
    if (auto status = PrepareRing(); !status) return status;
    std::thread gds_thread;
    core::Status gds_status = core::Ok();
    std::uint64_t gds_bytes = 0;
    if (!gds_ops_.empty()) {
      gds_thread = std::thread([this, &gds_status, &gds_bytes] { gds_status = RunGds(gds_bytes); });
    }
    // Fresh anonymous memory is faulted in and zeroed on first touch, which an O_DIRECT read
    // does inside io_uring_submit: the device idles while the kernel zeroes 4 GiB. Faulting
    // the destinations in on another thread, ahead of the reads, overlaps that with the I/O.
    // MADV_POPULATE_WRITE never changes bytes, so racing a finished read is harmless.
    std::jthread prefault;
    if (options_.device.kind == DeviceKind::kCpu) {
      prefault = std::jthread([this](std::stop_token stop) { Prefault(stop); });
    }
    core::Status status = RunPipeline();
    if (prefault.joinable()) {
      prefault.request_stop();
      prefault.join();
    }
    if (gds_thread.joinable()) gds_thread.join();
    if (!status) return status;
    if (!gds_status) return gds_status;
    if (auto populated = PopulateMapped(); !populated) return populated;
    stats.bytes_read += gds_bytes;
    for (const ReadOp& op : gds_ops_) stats.CountRequest(op.length);
    Stage("reads_done");
    if (cuda_ != nullptr) {
      for (CudaStream stream : streams_) {
        if (auto synced =
                cuda_->Check(cuda_->api().StreamSynchronize(stream), "cudaStreamSynchronize");
            !synced) {
          return synced;
        }
      }
      Stage("copies_done");
    }
    ReleaseRing();
    return core::Ok();
  }

  // Maps the cached pages of mapped runs into the process now (reading any that left the
  // cache), so the load ends with every byte resident, as a copying load would.
  core::Status PopulateMapped() {
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    for (const auto& [data, length] : populate_) {
      const auto begin = reinterpret_cast<std::uintptr_t>(data) / page * page;
      const auto end = AlignUp(reinterpret_cast<std::uintptr_t>(data) + length, page);
#ifdef MADV_POPULATE_READ
      if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ) != 0) {
        return MakeError(ErrorCode::kIo, fmt::format("populating a file mapping: {}",
                                                     std::system_category().message(errno)));
      }
#else
      ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);
#endif
      result_.stats_.bytes_read += length;
    }
    return core::Ok();
  }

  void Prefault(const std::stop_token& stop) {
#ifdef MADV_POPULATE_WRITE
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    for (const ReadOp& op : ops_) {
      if (stop.stop_requested()) return;
      if (op.destination == nullptr) continue;
      const auto begin = reinterpret_cast<std::uintptr_t>(op.destination) / page * page;
      const auto end = AlignUp(reinterpret_cast<std::uintptr_t>(op.destination) + op.length, page);
      if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) != 0) {
        return;  // an older kernel: the reads fault their pages in themselves
      }
    }
#else
    (void)stop;
#endif
  }

  core::Status PrepareRing() {
    LoadStats& stats = result_.stats_;
    stats.host_staging_bytes = stats.header_bytes;
    const bool staged = std::any_of(ops_.begin(), ops_.end(),
                                    [](const ReadOp& op) { return op.destination == nullptr; });
    if (!staged) return core::Ok();
    const std::uint64_t ring_bytes = options_.ring_bytes != 0
                                         ? options_.ring_bytes
                                         : std::uint64_t{options_.queue_depth} * SlotBytes();
    const auto slots =
        static_cast<std::uint32_t>(std::max<std::uint64_t>(2, ring_bytes / SlotBytes()));
    auto mapping = HostMapping::Allocate(std::uint64_t{slots} * SlotBytes());
    if (!mapping) return std::unexpected(mapping.error());
    ring_ = std::move(*mapping);
    stats.ring_bytes = ring_.bytes();
    stats.ring_slots = slots;
    slots_.assign(slots, Slot{});
    for (std::uint32_t i = 0; i < slots; ++i) slots_[i].data = ring_.data() + i * SlotBytes();
    if (cuda_ != nullptr) {
      auto pinned = PinnedRegistration::Register(*cuda_, ring_.data(), ring_.bytes());
      if (!pinned) {
        Fallback(fmt::format("{}; copying from pageable memory", pinned.error().message()));
        stats.host_staging_bytes += ring_.bytes();
      } else {
        pinned_ = std::move(*pinned);
        stats.host_pinned_bytes = ring_.bytes();
      }
      streams_.resize(options_.cuda_streams);
      for (CudaStream& stream : streams_) {
        if (auto status =
                cuda_->Check(cuda_->api().StreamCreateWithFlags(&stream, kCudaStreamNonBlocking),
                             "cudaStreamCreateWithFlags");
            !status) {
          return status;
        }
      }
      for (Slot& slot : slots_) {
        if (auto status = cuda_->Check(
                cuda_->api().EventCreateWithFlags(&slot.event, kCudaEventDisableTiming),
                "cudaEventCreateWithFlags");
            !status) {
          return status;
        }
      }
    } else {
      stats.host_staging_bytes += ring_.bytes();
    }
    return core::Ok();
  }

  void ReleaseRing() {
    if (cuda_ != nullptr) {
      for (Slot& slot : slots_) {
        if (slot.event != nullptr) cuda_->api().EventDestroy(slot.event);
        slot.event = nullptr;
      }
      for (CudaStream stream : streams_) {
        if (stream != nullptr) cuda_->api().StreamDestroy(stream);
      }
      streams_.clear();
    }
    pinned_ = PinnedRegistration();
    ring_ = HostMapping();
    slots_.clear();
  }

  // A free slot: one never used, or one whose device copy finished. With `wait`, blocks on the
  // oldest copy; without, returns -1 when none is free.
  core::Result<int> AcquireSlot(bool wait) {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].state == SlotState::kFree) return static_cast<int>(i);
    }
    int oldest = -1;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      Slot& slot = slots_[i];
      if (slot.state != SlotState::kCopying) continue;
      const int query = cuda_->api().EventQuery(slot.event);
      if (query == kCudaSuccess) {
        slot.state = SlotState::kFree;
        return static_cast<int>(i);
      }
      if (query != kCudaErrorNotReady) {
        return std::unexpected(cuda_->Check(query, "cudaEventQuery").error());
      }
      if (oldest < 0 || slot.sequence < slots_[oldest].sequence) oldest = static_cast<int>(i);
    }
    if (!wait || oldest < 0) return -1;
    if (auto status = cuda_->Check(cuda_->api().EventSynchronize(slots_[oldest].event),
                                   "cudaEventSynchronize");
        !status) {
      return std::unexpected(status.error());
    }
    slots_[oldest].state = SlotState::kFree;
    return oldest;
  }

  core::Status Deliver(const ReadOp& op, int slot_index) {
    Slot& slot = slots_[slot_index];
    if (cuda_ == nullptr) {
      for (const Piece& piece : op.pieces) {
        if (piece.destination != nullptr) {
          std::memcpy(piece.destination, slot.data + piece.slot_offset, piece.length);
        }
      }
      slot.state = SlotState::kFree;
      return core::Ok();
    }
    CudaStream stream = streams_[next_stream_];
    next_stream_ = (next_stream_ + 1) % streams_.size();
    for (const Piece& piece : op.pieces) {
      if (auto status = cuda_->Check(
              cuda_->api().MemcpyAsync(piece.destination, slot.data + piece.slot_offset,
                                       piece.length, kCudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync");
          !status) {
        return status;
      }
    }
    if (auto status = cuda_->Check(cuda_->api().EventRecord(slot.event, stream), "cudaEventRecord");
        !status) {
      return status;
    }
    slot.state = SlotState::kCopying;
    slot.sequence = ++sequence_;
    return core::Ok();
  }

  core::Status Submit(InFlight& flight, std::uint64_t tag) {
    const ReadOp& op = ops_[flight.op];
    const std::uint64_t remaining = op.length - flight.done;
    LoadStats& stats = result_.stats_;
    stats.CountRequest(remaining);
    auto status = engine_->Submit(ReadRequest{.fd = flight.fd,
                                              .offset = op.offset + flight.done,
                                              .buffer = flight.buffer + flight.done,
                                              .length = static_cast<std::uint32_t>(remaining),
                                              .tag = tag});
    if (!status) return status;
    ++in_flight_;
    stats.max_in_flight = std::max(stats.max_in_flight, in_flight_);
    in_flight_sum_ += in_flight_;
    ++submissions_;
    return core::Ok();
  }

  core::Status RunPipeline() {
    LoadStats& stats = result_.stats_;
    std::vector<InFlight> table(options_.queue_depth);
    std::vector<std::uint64_t> free_tags;
    for (std::uint64_t i = options_.queue_depth; i > 0; --i) free_tags.push_back(i - 1);
    std::size_t next = 0;
    bool first = true;
    while (next < ops_.size() || in_flight_ > 0) {
      while (in_flight_ < options_.queue_depth && next < ops_.size()) {
        const ReadOp& op = ops_[next];
        int slot = -1;
        if (op.destination == nullptr) {
          auto acquired = AcquireSlot(/*wait=*/in_flight_ == 0);
          if (!acquired) return std::unexpected(acquired.error());
          if (*acquired < 0) break;
          slot = *acquired;
          slots_[slot].state = SlotState::kReading;
        }
        const FileState& file = files_[op.file];
        const auto size = static_cast<std::uint64_t>(file.info.st_size);
        const std::uint64_t tag = free_tags.back();
        free_tags.pop_back();
        table[tag] =
            InFlight{.op = next,
                     .slot = slot,
                     .fd = file.ReadFd(),
                     .buffer = slot >= 0 ? slots_[slot].data : op.destination,
                     .expected = std::min(op.offset + op.length, size) - std::min(op.offset, size)};
        if (auto status = Submit(table[tag], tag); !status) return status;
        ++next;
      }
      if (in_flight_ == 0) {
        return MakeError(ErrorCode::kInternal, "loader pipeline stalled with no read in flight");
      }
      auto completion = engine_->WaitOne();
      if (!completion) return std::unexpected(completion.error());
      --in_flight_;
      if (first) {
        Stage("first_read");
        first = false;
      }
      InFlight& flight = table[completion->tag];
      const ReadOp& op = ops_[flight.op];
      FileState& file = files_[op.file];
      if (completion->result == -EINVAL && file.direct && flight.fd == file.direct_fd.get()) {
        // The filesystem took O_DIRECT at open but refuses the reads: the same (aligned)
        // request through the page cache reads the same bytes into the same place.
        file.direct = false;
        Fallback(
            fmt::format("{}: O_DIRECT read refused, reading through the page cache", file.path));
      }
      if (completion->result == -EINVAL && flight.fd == file.direct_fd.get() && !file.direct) {
        flight.fd = file.fd.get();
        if (auto status = Submit(flight, completion->tag); !status) return status;
        continue;
      }
      if (completion->result < 0) {
        return MakeError(
            ErrorCode::kIo,
            fmt::format("reading {} at {}: {}", file.path, op.offset + flight.done,
                        std::system_category().message(static_cast<int>(-completion->result))));
      }
      const auto got = static_cast<std::uint64_t>(completion->result);
      stats.bytes_read += got;
      flight.done += got;
      if (got == 0 && flight.done < flight.expected) {
        return MakeError(ErrorCode::kDataLoss,
                         fmt::format("{} ended at byte {} during the load; its header says {}",
                                     file.path, op.offset + flight.done, file.info.st_size));
      }
      if (flight.done < flight.expected) {
        if (auto status = Submit(flight, completion->tag); !status) return status;
        continue;
      }
      if (flight.slot >= 0) {
        if (auto status = Deliver(op, flight.slot); !status) return status;
      }
      free_tags.push_back(completion->tag);
      if (options_.on_progress) options_.on_progress(stats.bytes_read);
    }
    stats.mean_in_flight =
        submissions_ == 0 ? 0
                          : static_cast<double>(in_flight_sum_) / static_cast<double>(submissions_);
    return core::Ok();
  }

  // cuFileRead is synchronous: queue_depth threads keep that many requests at the device.
  core::Status RunGds(std::uint64_t& bytes) {
    std::atomic<std::size_t> next{0};
    std::mutex mutex;
    core::Status status = core::Ok();
    std::vector<std::thread> workers;
    for (std::uint32_t w = 0; w < options_.queue_depth; ++w) {
      workers.emplace_back([&] {
        for (std::size_t i = next++; i < gds_ops_.size(); i = next++) {
          const ReadOp& op = gds_ops_[i];
          const FileState& file = files_[op.file];
          const ssize_t got = cufile_->api().Read(file.gds, op.destination, op.length,
                                                  static_cast<off_t>(op.offset), 0);
          const std::lock_guard lock(mutex);
          const auto size = static_cast<std::uint64_t>(file.info.st_size);
          const std::uint64_t expected = std::min(op.offset + op.length, size) - op.offset;
          if (got < 0 || static_cast<std::uint64_t>(got) < expected) {
            if (status) {
              status = MakeError(
                  got < 0 ? ErrorCode::kIo : ErrorCode::kDataLoss,
                  fmt::format("cuFileRead {} at {}: returned {}", file.path, op.offset, got));
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

  core::Status Verify() {
    for (const FileState& file : files_) {
      struct stat now {};
      if (::fstat(file.fd.get(), &now) != 0) {
        return MakeError(ErrorCode::kIo, fmt::format("stat {}: {}", file.path,
                                                     std::system_category().message(errno)));
      }
      // The open fd is what was read: a rename over the path leaves these bytes consistent,
      // a write in place or a truncation changes the size or the modification time.
      if (!SameFile(file.info, now)) {
        return MakeError(
            ErrorCode::kDataLoss,
            fmt::format("{} changed during the load (size {} -> {}, mtime {}.{:09} "
                        "-> {}.{:09})",
                        file.path, file.info.st_size, now.st_size, file.info.st_mtim.tv_sec,
                        file.info.st_mtim.tv_nsec, now.st_mtim.tv_sec, now.st_mtim.tv_nsec));
      }
    }
    return core::Ok();
  }

  enum class SlotState { kFree, kReading, kCopying };
  struct Slot {
    std::byte* data = nullptr;
    CudaEvent event = nullptr;
    SlotState state = SlotState::kFree;
    std::uint64_t sequence = 0;
  };

  struct RunTensor {
    std::uint32_t file = 0;
    std::size_t run = 0;
    std::size_t tensor = 0;
    std::uint64_t file_begin = 0;
  };

  const std::vector<std::string>& paths_;
  const LoadOptions& options_;
  const std::chrono::steady_clock::time_point start_;
  LoadResult result_;
  std::vector<FileState> files_;
  std::vector<std::vector<FileRun>> runs_;
  std::vector<std::vector<StridedTensor>> strided_;
  std::vector<RunTensor> run_tensors_;
  std::vector<std::uint64_t> tensor_offsets_;
  std::vector<std::optional<std::uint64_t>> tensor_file_begin_;  // contiguous tensors only
  std::vector<std::pair<std::byte*, std::uint64_t>> populate_;   // mapped runs
  std::vector<ReadOp> ops_;
  std::vector<ReadOp> gds_ops_;
  std::unique_ptr<ReadEngine> engine_;
  CudaRuntime* cuda_ = nullptr;
  std::unique_ptr<CuFile> cufile_;
  HostMapping ring_;
  PinnedRegistration pinned_;
  std::vector<Slot> slots_;
  std::vector<CudaStream> streams_;
  std::size_t next_stream_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint32_t in_flight_ = 0;
  std::uint64_t in_flight_sum_ = 0;
  std::uint64_t submissions_ = 0;
};

core::Result<LoadResult> LoadSafetensors(const std::vector<std::string>& files,
                                         const LoadOptions& options) {
  LoadRun run(files, options);
  return run.Run();
}

}  // namespace modelplane::agent
