#include "node-agent/sources/shared_filesystem_range_source.h"

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/api/model_revision.h"
#include "core/api/model_revision_validation.h"

namespace modelplane::agent {
namespace {

using core::Error;
using core::ErrorCode;
using core::MakeError;

Error OpenError(int error, const std::string& path, const std::string& root) {
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return Error(ErrorCode::kNotFound, fmt::format("{} does not exist below {}", path, root));
    case EXDEV:
    case ELOOP:
      return Error(
          ErrorCode::kPermissionDenied,
          fmt::format("{} escapes the source root {} (through \"..\" or a symlink)", path, root));
    case EACCES:
    case EPERM:
      return Error(ErrorCode::kPermissionDenied,
                   fmt::format("opening {} below {}: {}", path, root,
                               std::system_category().message(error)));
    default:
      return Error(ErrorCode::kIo, fmt::format("opening {} below {}: {}", path, root,
                                               std::system_category().message(error)));
  }
}

bool Aligned(std::uint64_t value) {
  return value % SharedFilesystemRangeSource::kDirectAlignment == 0;
}

}  // namespace

core::Result<std::unique_ptr<SharedFilesystemRangeSource>> SharedFilesystemRangeSource::Create(
    SharedFilesystemRangeSourceOptions options) {
  if (options.root.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "shared filesystem source needs a root path");
  }
  if (options.confine_to.empty()) options.confine_to = options.root;
  // What lies between the confining root and the source's root is walked beneath the former,
  // like every file, so a symlink there cannot lead out either.
  std::string prefix;
  if (options.root != options.confine_to) {
    const std::string& confine = options.confine_to;
    const bool below = options.root.starts_with(confine) && options.root.size() > confine.size() &&
                       (confine.back() == '/' || options.root[confine.size()] == '/');
    if (!below) {
      return MakeError(
          ErrorCode::kPermissionDenied,
          fmt::format("shared filesystem root {} is not below {}", options.root, confine));
    }
    prefix = options.root.substr(confine.size() + (confine.back() == '/' ? 0 : 1));
    if (const std::string problem = core::api::CheckRelativePath(prefix); !problem.empty()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("shared filesystem root {}: {}", options.root, problem));
    }
  }
  const int fd = ::open(options.confine_to.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return MakeError(error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                     fmt::format("opening shared filesystem root {}: {}", options.confine_to,
                                 std::system_category().message(error)));
  }
  if (options.max_concurrency == 0) options.max_concurrency = 1;
  if (options.read_chunk < kDirectAlignment) options.read_chunk = kDirectAlignment;
  options.read_chunk -= options.read_chunk % kDirectAlignment;
  auto source = std::unique_ptr<SharedFilesystemRangeSource>(
      new SharedFilesystemRangeSource(std::move(options), core::UniqueFd(fd), prefix));
  if (!prefix.empty()) {
    auto directory = source->OpenConfined(prefix, O_PATH | O_DIRECTORY);
    if (!directory) return std::unexpected(directory.error());
  }
  return source;
}

SharedFilesystemRangeSource::SharedFilesystemRangeSource(SharedFilesystemRangeSourceOptions options,
                                                         core::UniqueFd root, std::string prefix)
    : options_(std::move(options)),
      root_(std::move(root)),
      prefix_(std::move(prefix)),
      name_(fmt::format("{}/{}", core::api::kTierSharedFilesystem, options_.name)) {
  if (!prefix_.empty()) prefix_ += '/';
}

std::string_view SharedFilesystemRangeSource::tier() const {
  return core::api::kTierSharedFilesystem;
}

core::Result<core::UniqueFd> SharedFilesystemRangeSource::OpenBeneath(const std::string& path,
                                                                      int flags) const {
  // The caller validated the path already; checking again keeps this safe on its own, and says
  // what is wrong more precisely than the kernel's EXDEV.
  if (const std::string problem = core::api::CheckRelativePath(path); !problem.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("refusing path \"{}\" below {}: {}",
                                                              path, options_.root, problem));
  }
  return OpenConfined(prefix_ + path, flags);
}

core::Result<core::UniqueFd> SharedFilesystemRangeSource::OpenConfined(const std::string& path,
                                                                       int flags) const {
  if ((flags & O_PATH) == 0) flags |= O_RDONLY | O_NONBLOCK;
  flags |= O_CLOEXEC;
  if (!options_.force_component_walk) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, root_.get(), path.c_str(), &how, sizeof how);
    if (fd >= 0) return core::UniqueFd(static_cast<int>(fd));
    if (errno != ENOSYS) {
      const int error = errno;
      if (error == EINVAL && (flags & O_DIRECT) != 0)
        return std::unexpected(Error(ErrorCode::kInvalidArgument, "O_DIRECT refused", false));
      return std::unexpected(OpenError(error, path, options_.confine_to));
    }
  }
  return OpenByWalking(path, flags);
}

core::Result<core::UniqueFd> SharedFilesystemRangeSource::OpenByWalking(const std::string& path,
                                                                        int flags) const {
  core::UniqueFd directory;
  int parent = root_.get();
  std::size_t begin = 0;
  while (true) {
    const std::size_t slash = path.find('/', begin);
    const std::string component = path.substr(begin, slash - begin);
    const bool last = slash == std::string::npos;
    const int fd =
        last ? ::openat(parent, component.c_str(), flags | O_NOFOLLOW)
             : ::openat(parent, component.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      if (error == EINVAL && last && (flags & O_DIRECT) != 0) {
        return std::unexpected(Error(ErrorCode::kInvalidArgument, "O_DIRECT refused", false));
      }
      // O_NOFOLLOW on a symlink gives ELOOP for the last component and ENOTDIR for a directory
      // one; both are refusals here, since this walk allows no symlinks at all.
      struct stat info {};
      if (::fstatat(parent, component.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(info.st_mode)) {
        return MakeError(ErrorCode::kPermissionDenied,
                         fmt::format("{} below {} goes through the symlink \"{}\", which this "
                                     "kernel (no openat2) cannot confine to the root",
                                     path, options_.confine_to, component));
      }
      return std::unexpected(OpenError(error, path, options_.confine_to));
    }
    if (last) return core::UniqueFd(fd);
    directory.Reset(fd);
    parent = directory.get();
    begin = slash + 1;
  }
}

core::Status SharedFilesystemRangeSource::ReadAll(int fd, const std::string& path,
                                                  std::uint64_t offset,
                                                  std::span<std::byte> destination,
                                                  const ReadContext& context) const {
  std::size_t done = 0;
  while (done < destination.size()) {
    if (auto stop = context.StopReason()) return std::unexpected(*stop);
    const std::size_t want = std::min(options_.read_chunk, destination.size() - done);
    const ssize_t got =
        ::pread(fd, destination.data() + done, want, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return MakeError(ErrorCode::kIo,
                       fmt::format("reading {} at {} below {}: {}", path, offset + done,
                                   options_.root, std::system_category().message(errno)));
    }
    if (got == 0) {
      return std::unexpected(
          Error(ErrorCode::kDataLoss,
                fmt::format("{} below {} ends at {}, before the range's end at {}", path,
                            options_.root, offset + done, offset + destination.size()),
                false));
    }
    done += static_cast<std::size_t>(got);
  }
  return core::Ok();
}

core::Status SharedFilesystemRangeSource::ReadRange(const SourceFile& file, std::uint64_t offset,
                                                    std::span<std::byte> destination,
                                                    const ReadContext& context) {
  if (auto stop = context.StopReason()) return std::unexpected(*stop);
  if (destination.empty()) return core::Ok();
  auto buffered = OpenBeneath(file.path, 0);
  if (!buffered) return std::unexpected(buffered.error());
  struct stat info {};
  if (::fstat(buffered->get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     fmt::format("{} below {} is not a regular file", file.path, options_.root));
  }

  std::size_t direct_length = 0;
  if (options_.direct_io && direct_supported_.load(std::memory_order_relaxed) && Aligned(offset) &&
      Aligned(reinterpret_cast<std::uintptr_t>(destination.data()))) {
    direct_length = destination.size() - destination.size() % kDirectAlignment;
  }
  if (direct_length > 0) {
    auto direct = OpenBeneath(file.path, O_DIRECT);
    if (direct) {
      if (auto status =
              ReadAll(direct->get(), file.path, offset, destination.first(direct_length), context);
          !status) {
        return status;
      }
      direct_bytes_ += direct_length;
    } else if (direct.error().code() == ErrorCode::kInvalidArgument) {
      direct_supported_.store(false, std::memory_order_relaxed);
      direct_length = 0;
    } else {
      return std::unexpected(direct.error());
    }
  }
  auto status = ReadAll(buffered->get(), file.path, offset + direct_length,
                        destination.subspan(direct_length), context);
  if (status) buffered_bytes_ += destination.size() - direct_length;
  return status;
}

}  // namespace modelplane::agent
