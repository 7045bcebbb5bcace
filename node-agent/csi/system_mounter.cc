#include "node-agent/csi/system_mounter.h"

#include <cerrno>
#include <system_error>

#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

namespace modelplane::agent {
namespace {

// Stacked mounts at one target are unmounted one per call; more than this is not ours.
constexpr int kMaxStackedMounts = 16;

core::Error MountError(int error_number, std::string_view what, const std::filesystem::path& path) {
  const core::ErrorCode code = (error_number == EPERM || error_number == EACCES)
                                   ? core::ErrorCode::kPermissionDenied
                                   : core::ErrorCode::kIo;
  return core::Error(
      code,
      fmt::format("{} {}: {}", what, path.string(), std::generic_category().message(error_number)),
      false);
}

// Flags of the source's mount that a remount must keep: inside a user namespace the kernel
// refuses (EPERM) a remount that would clear a flag the outer namespace locked, and dropping
// noexec or an atime rule the administrator chose is not ours to decide either.
unsigned long KeptFlags(const std::filesystem::path& source) {
  struct statvfs info {};
  if (::statvfs(source.c_str(), &info) != 0) return 0;
  unsigned long flags = 0;
  if ((info.f_flag & ST_NOEXEC) != 0) flags |= MS_NOEXEC;
  if ((info.f_flag & ST_NOATIME) != 0) flags |= MS_NOATIME;
  if ((info.f_flag & ST_NODIRATIME) != 0) flags |= MS_NODIRATIME;
  if ((info.f_flag & ST_RELATIME) != 0) flags |= MS_RELATIME;
  return flags;
}

}  // namespace

core::Status SystemMounter::BindReadOnly(const std::filesystem::path& source,
                                         const std::filesystem::path& target) {
  const unsigned long kept = KeptFlags(source);
  if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return std::unexpected(MountError(errno, "bind-mounting " + source.string() + " at", target));
  }
  if (::mount(source.c_str(), target.c_str(), nullptr,
              MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | kept, nullptr) != 0) {
    const core::Error error = MountError(errno, "making the bind mount read-only at", target);
    // Never leave a writable view of verified bytes behind.
    ::umount2(target.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
    return std::unexpected(error);
  }
  return core::Ok();
}

core::Status SystemMounter::Unmount(const std::filesystem::path& target) {
  for (int attempt = 0; attempt < kMaxStackedMounts; ++attempt) {
    if (::umount2(target.c_str(), UMOUNT_NOFOLLOW) == 0) continue;  // maybe another below
    switch (errno) {
      case EINVAL:  // not a mount point (any more)
      case ENOENT: return core::Ok();
      case EBUSY:
        return std::unexpected(core::Error(
            core::ErrorCode::kUnavailable,
            fmt::format("unmounting {}: the mount is busy (files still open)", target.string()),
            true));
      default: return std::unexpected(MountError(errno, "unmounting", target));
    }
  }
  return core::MakeError(
      core::ErrorCode::kInternal,
      fmt::format("{} is still mounted after {} unmounts", target.string(), kMaxStackedMounts));
}

core::Result<std::vector<MountEntry>> SystemMounter::Mounts() const {
  return ReadMountInfo(mountinfo_);
}

}  // namespace modelplane::agent
