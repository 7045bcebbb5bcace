// The seam between the CSI plugin and the kernel's mount table: the plugin decides what to mount
// where, a Mounter does it. SystemMounter (system_mounter.h) calls mount(2) and umount2(2); tests
// of request handling and lease recovery run against a recording double without privileges.
//
// Thread safety: implementations must allow calls from several threads (the plugin serialises
// its own calls, but a test or a future caller may not).
#pragma once

#include <filesystem>
#include <vector>

#include "core/error/error.h"
#include "node-agent/csi/mount_info.h"

namespace modelplane::agent {

class Mounter {
 public:
  virtual ~Mounter() = default;

  // Bind-mounts the folder `source` at the existing folder `target`, read-only, nosuid, nodev.
  // The result is read-only even when `source` is writable: the read-only flag is set on the
  // new mount itself, not inherited.
  [[nodiscard]] virtual core::Status BindReadOnly(const std::filesystem::path& source,
                                                  const std::filesystem::path& target) = 0;
  // Unmounts everything mounted at `target` (stacked mounts included). Nothing mounted there is
  // success. kUnavailable (retryable) while the mount is busy.
  [[nodiscard]] virtual core::Status Unmount(const std::filesystem::path& target) = 0;
  // The mounts this process sees (its mount namespace).
  [[nodiscard]] virtual core::Result<std::vector<MountEntry>> Mounts() const = 0;
};

}  // namespace modelplane::agent
