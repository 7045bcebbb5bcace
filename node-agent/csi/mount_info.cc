#include "node-agent/csi/mount_info.h"

#include <charconv>

#include <fmt/format.h>

#include "core/io/bounded_file.h"

namespace modelplane::agent {
namespace {

constexpr std::size_t kMountInfoLimit = 64ull << 20;

// "\040" -> " ": the kernel's escaping of paths in mountinfo (fs/proc_namespace.c, mangle()).
std::string Unescape(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string_view digits = field.substr(i + 1, 3);
      if (digits.find_first_not_of("01234567") == std::string_view::npos) {
        out.push_back(static_cast<char>(((digits[0] - '0') << 6) | ((digits[1] - '0') << 3) |
                                        (digits[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

std::vector<std::string_view> SplitSpaces(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (start < line.size()) {
    const std::size_t end = line.find(' ', start);
    const std::size_t stop = end == std::string_view::npos ? line.size() : end;
    if (stop > start) fields.push_back(line.substr(start, stop - start));
    start = stop + 1;
  }
  return fields;
}

bool ParseInt(std::string_view text, int& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

bool MountEntry::HasOption(std::string_view option) const {
  std::string_view rest = options;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    if (rest.substr(0, comma) == option) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

core::Result<std::vector<MountEntry>> ParseMountInfo(std::string_view text) {
  std::vector<MountEntry> mounts;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    if (line.empty()) continue;
    const auto fields = SplitSpaces(line);
    auto malformed = [&](std::string_view why) {
      return core::MakeError(core::ErrorCode::kInvalidArgument,
                             fmt::format("mountinfo line {} {}: {:.200}", line_number, why, line));
    };
    // Six fixed fields, optional fields, "-", then three more.
    std::size_t separator = 6;
    while (separator < fields.size() && fields[separator] != "-") ++separator;
    if (fields.size() < 10 || separator + 3 >= fields.size()) {
      return malformed("has too few fields");
    }
    MountEntry entry;
    if (!ParseInt(fields[0], entry.mount_id) || !ParseInt(fields[1], entry.parent_id)) {
      return malformed("has a malformed mount id");
    }
    entry.device = std::string(fields[2]);
    entry.root = Unescape(fields[3]);
    entry.mount_point = Unescape(fields[4]);
    entry.options = std::string(fields[5]);
    entry.filesystem_type = Unescape(fields[separator + 1]);
    entry.source = Unescape(fields[separator + 2]);
    entry.super_options = std::string(fields[separator + 3]);
    mounts.push_back(std::move(entry));
  }
  return mounts;
}

core::Result<std::vector<MountEntry>> ReadMountInfo(const std::filesystem::path& path) {
  // Files under /proc report size 0: read until the end, bounded.
  auto text = core::ReadBoundedFile(path.string(), kMountInfoLimit);
  if (!text) return std::unexpected(text.error());
  return ParseMountInfo(*text);
}

const MountEntry* FindMount(const std::vector<MountEntry>& mounts,
                            const std::filesystem::path& mount_point) {
  const MountEntry* found = nullptr;
  for (const MountEntry& entry : mounts) {
    if (entry.mount_point == mount_point.native()) found = &entry;
  }
  return found;
}

}  // namespace modelplane::agent
