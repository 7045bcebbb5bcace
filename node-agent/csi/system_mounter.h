// The real Mounter: mount(2) and umount2(2) in the agent's own mount namespace (in the chart the
// kubelet's pods folder is mounted into the agent with Bidirectional propagation, so what it
// mounts there reaches the host and the pods). Needs CAP_SYS_ADMIN.
//
// A read-only bind mount takes two calls: MS_BIND makes the mount, and only a second
// MS_BIND|MS_REMOUNT|MS_RDONLY makes that mount read-only (flags on the first call are ignored
// for a bind). If the second call fails the first is undone, so no writable mount is left.
//
// Thread safety: stateless; any thread.
#pragma once

#include <filesystem>
#include <memory>

#include "node-agent/csi/mounter.h"

namespace modelplane::agent {

class SystemMounter final : public Mounter {
 public:
  explicit SystemMounter(std::filesystem::path mountinfo = "/proc/self/mountinfo")
      : mountinfo_(std::move(mountinfo)) {}

  [[nodiscard]] core::Status BindReadOnly(const std::filesystem::path& source,
                                          const std::filesystem::path& target) override;
  [[nodiscard]] core::Status Unmount(const std::filesystem::path& target) override;
  [[nodiscard]] core::Result<std::vector<MountEntry>> Mounts() const override;

 private:
  const std::filesystem::path mountinfo_;
};

}  // namespace modelplane::agent
