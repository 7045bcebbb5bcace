// Reads the kernel's table of mounts (/proc/self/mountinfo, proc(5)) so the CSI plugin can tell
// whether a target path is mounted and what is mounted there. Bind mounts on one filesystem share
// its device number, so stat(2) cannot tell a bind-mounted folder from a plain one; mountinfo can.
//
// Each line: mount id, parent id, major:minor, root (the path inside the source filesystem that
// is mounted), mount point, mount options, optional fields ending at "-", filesystem type, source,
// super options. Paths escape space, tab, newline and backslash as \ooo octal.
//
// Thread safety: pure functions.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"

namespace modelplane::agent {

struct MountEntry {
  int mount_id = 0;
  int parent_id = 0;
  std::string device;  // "major:minor"
  std::string root;
  std::string mount_point;
  std::string options;  // per mount: "ro,nosuid,nodev,relatime"
  std::string filesystem_type;
  std::string source;
  std::string super_options;

  // True when the per-mount options hold `option` ("ro", "nosuid" ...).
  [[nodiscard]] bool HasOption(std::string_view option) const;
};

// kInvalidArgument naming the line when one is malformed.
[[nodiscard]] core::Result<std::vector<MountEntry>> ParseMountInfo(std::string_view text);

// Reads and parses the file (bounded: a table larger than 64 MiB is refused).
[[nodiscard]] core::Result<std::vector<MountEntry>> ReadMountInfo(
    const std::filesystem::path& path = "/proc/self/mountinfo");

// The last entry mounted at `mount_point` (the one a path lookup sees), or nullptr.
[[nodiscard]] const MountEntry* FindMount(const std::vector<MountEntry>& mounts,
                                          const std::filesystem::path& mount_point);

}  // namespace modelplane::agent
