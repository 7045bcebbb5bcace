#include "core/hub/hub_tree_page.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/hub/hub_errors.h"
#include "core/json/json_document.h"

namespace modelplane::core {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxTreePathLength = 4096;

Error MalformedEntry(std::size_t index, std::string_view problem) {
  return HubRefusal(HubReason::kMalformedAnswer,
                    fmt::format("tree listing entry {}: {}", index, problem));
}

bool IsLowerHex(std::string_view text, std::size_t length) {
  return text.size() == length && std::ranges::all_of(text, [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// A non-negative integer member, or nullopt.
std::optional<std::int64_t> SizeMember(const json& object, const char* name) {
  const auto found = object.find(name);
  if (found == object.end() || !found->is_number_integer()) return std::nullopt;
  const auto value = found->get<std::int64_t>();
  if (value < 0) return std::nullopt;
  return value;
}

Result<HubFile> ParseFileEntry(const json& entry, std::size_t index) {
  HubFile file;
  const auto path = entry.find("path");
  if (path == entry.end() || !path->is_string() || path->get_ref<const std::string&>().empty() ||
      path->get_ref<const std::string&>().size() > kMaxTreePathLength) {
    return std::unexpected(MalformedEntry(index, "no path"));
  }
  file.path = path->get<std::string>();
  const std::optional<std::int64_t> size = SizeMember(entry, "size");
  if (!size) return std::unexpected(MalformedEntry(index, fmt::format("{}: no size", file.path)));
  file.size = *size;
  const auto lfs = entry.find("lfs");
  if (lfs == entry.end() || lfs->is_null()) return file;
  const auto oid = lfs->is_object() ? lfs->find("oid") : lfs->end();
  if (oid == lfs->end() || !oid->is_string() ||
      !IsLowerHex(oid->get_ref<const std::string&>(), 64)) {
    return std::unexpected(
        MalformedEntry(index, fmt::format("{}: lfs.oid is not a sha256", file.path)));
  }
  file.sha256 = oid->get<std::string>();
  file.lfs = true;
  if (const std::optional<std::int64_t> lfs_size = SizeMember(*lfs, "size");
      lfs_size && *lfs_size != file.size) {
    return std::unexpected(
        HubRefusal(HubReason::kListingMismatch,
                   fmt::format("{}: the listing gives {} bytes and the LFS pointer {}", file.path,
                               file.size, *lfs_size)));
  }
  return file;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// True when a link's parameters (after '>') hold rel="next", among other relation types too.
bool IsNextRelation(std::string_view parameters) {
  while (!parameters.empty()) {
    const std::size_t semicolon = parameters.find(';');
    const std::string_view parameter = Trim(parameters.substr(0, semicolon));
    parameters = semicolon == std::string_view::npos ? "" : parameters.substr(semicolon + 1);
    const std::size_t equals = parameter.find('=');
    if (equals == std::string_view::npos || Lowercase(Trim(parameter.substr(0, equals))) != "rel") {
      continue;
    }
    std::string_view value = Trim(parameter.substr(equals + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    for (std::size_t start = 0; start <= value.size();) {
      const std::size_t space = value.find(' ', start);
      const std::string_view relation = value.substr(start, space - start);
      if (Lowercase(relation) == "next") return true;
      if (space == std::string_view::npos) break;
      start = space + 1;
    }
  }
  return false;
}

}  // namespace

Result<std::vector<HubFile>> ParseTreePage(std::string_view body) {
  // Entries nest two levels (lfs, or lastCommit with expand); the page size is bounded by the
  // caller's fetch.
  auto page = ParseJsonDocument(body, {.max_bytes = body.size(), .max_depth = 8});
  if (!page) {
    return std::unexpected(HubRefusal(HubReason::kMalformedAnswer,
                                      fmt::format("tree listing: {}", page.error().message())));
  }
  if (!page->is_array()) {
    return std::unexpected(
        HubRefusal(HubReason::kMalformedAnswer, "tree listing: not a JSON array"));
  }
  std::vector<HubFile> files;
  for (std::size_t index = 0; index < page->size(); ++index) {
    const json& entry = (*page)[index];
    const auto type = entry.is_object() ? entry.find("type") : entry.end();
    if (type == entry.end() || !type->is_string()) {
      return std::unexpected(MalformedEntry(index, "no type"));
    }
    if (*type != "file") continue;  // directories: their files are listed on their own
    auto file = ParseFileEntry(entry, index);
    if (!file) return std::unexpected(file.error());
    files.push_back(std::move(*file));
  }
  return files;
}

std::optional<std::string> NextPageLink(std::string_view link_header) {
  while (!link_header.empty()) {
    const std::size_t open = link_header.find('<');
    const std::size_t close = link_header.find('>', open);
    if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
    const std::string_view target = link_header.substr(open + 1, close - open - 1);
    link_header = link_header.substr(close + 1);
    const std::size_t comma = link_header.find(',');
    if (IsNextRelation(link_header.substr(0, comma))) return std::string(target);
    if (comma == std::string_view::npos) return std::nullopt;
    link_header = link_header.substr(comma + 1);
  }
  return std::nullopt;
}

}  // namespace modelplane::core
