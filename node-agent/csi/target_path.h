// The rule for the paths kubelet asks the plugin to mount at or unmount from. Defence in depth:
// kubelet only sends paths under its pods folder, but a privileged process that mounts wherever
// a gRPC caller says would let anyone who reaches the socket cover /etc or /usr.
//
// Thread safety: pure functions.
#pragma once

#include <filesystem>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::agent {

// Ok when `target` is absolute, normalized (no ".", "..", "//" or trailing "/"), at most 4096
// bytes without NUL, and strictly below `root` (a normalized absolute folder). kInvalidArgument
// saying which rule failed otherwise.
[[nodiscard]] core::Status CheckTargetPath(std::string_view target,
                                           const std::filesystem::path& root);

}  // namespace modelplane::agent
