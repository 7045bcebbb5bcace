#include "node-agent/csi/target_path.h"

#include <fmt/format.h>

namespace modelplane::agent {

core::Status CheckTargetPath(std::string_view target, const std::filesystem::path& root) {
  auto refuse = [&](std::string_view why) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("target path {:?} {}", target.substr(0, 256), why));
  };
  if (target.size() > 4096) return refuse("is longer than 4096 bytes");
  if (target.find('\0') != std::string_view::npos) return refuse("contains a NUL byte");
  if (target.empty() || target.front() != '/') return refuse("is not an absolute path");
  const std::filesystem::path path(target);
  if (target.size() > 1 && target.back() == '/') return refuse("ends with '/'");
  if (path.lexically_normal().native() != target) {
    return refuse("is not normalized (\".\", \"..\" or \"//\")");
  }
  const std::filesystem::path relative = path.lexically_relative(root);
  if (relative.empty() || relative == "." || *relative.begin() == "..") {
    return refuse(fmt::format("is not below the plugin's target root {}", root.string()));
  }
  return core::Ok();
}

}  // namespace modelplane::agent
