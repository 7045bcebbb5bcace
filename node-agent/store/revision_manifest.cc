#include "node-agent/store/revision_manifest.h"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/api/model_revision_validation.h"
#include "core/json/json_document.h"
#include "core/text/utf8.h"

namespace modelplane::agent {
namespace {

constexpr std::size_t kMaxManifestFiles = 100'000;

core::Error Malformed(std::string_view what) {
  return core::Error(core::ErrorCode::kDataLoss, fmt::format("revision manifest: {}", what), false);
}

}  // namespace

std::uint64_t RevisionManifest::TotalBytes() const {
  std::uint64_t total = 0;
  for (const ManifestFile& file : files) total += file.size;
  return total;
}

core::Status ValidateRelativePath(std::string_view path) {
  if (!core::IsValidUtf8(path)) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("path {:?} is not valid UTF-8", path));
  }
  if (std::string problem = core::api::CheckRelativePath(path); !problem.empty()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("path {:?} {}", path, problem));
  }
  return core::Ok();
}

std::string SerializeManifest(const RevisionManifest& manifest) {
  nlohmann::json files = nlohmann::json::array();
  for (const ManifestFile& file : manifest.files) {
    files.push_back(
        {{"path", file.path}, {"size", file.size}, {"sha256", core::FormatDigest(file.sha256)}});
  }
  const nlohmann::json document = {{"revisionDigest", core::FormatDigest(manifest.revision_digest)},
                                   {"name", manifest.name},
                                   {"publishedUnixSeconds", manifest.published_unix_seconds},
                                   {"files", std::move(files)}};
  return document.dump(1) + "\n";
}

core::Result<RevisionManifest> ParseManifest(std::string_view text) {
  auto parsed = core::ParseJsonDocument(text);
  if (!parsed) return std::unexpected(Malformed(parsed.error().message()));
  const nlohmann::json& document = *parsed;
  if (!document.is_object()) return std::unexpected(Malformed("not a JSON object"));
  RevisionManifest manifest;
  const auto digest_field = document.find("revisionDigest");
  if (digest_field == document.end() || !digest_field->is_string()) {
    return std::unexpected(Malformed("revisionDigest missing"));
  }
  auto digest = core::ParseDigest(digest_field->get<std::string>());
  if (!digest) return std::unexpected(Malformed("revisionDigest malformed"));
  manifest.revision_digest = *digest;
  if (auto name = document.find("name"); name != document.end() && name->is_string()) {
    manifest.name = name->get<std::string>();
  }
  if (auto published = document.find("publishedUnixSeconds");
      published != document.end() && published->is_number_integer()) {
    manifest.published_unix_seconds = published->get<std::int64_t>();
  }
  const auto files = document.find("files");
  if (files == document.end() || !files->is_array())
    return std::unexpected(Malformed("files missing"));
  if (files->size() > kMaxManifestFiles) return std::unexpected(Malformed("too many files"));
  std::set<std::string> seen;
  for (const nlohmann::json& entry : *files) {
    if (!entry.is_object()) return std::unexpected(Malformed("a file entry is not an object"));
    const auto path = entry.find("path");
    const auto size = entry.find("size");
    const auto sha = entry.find("sha256");
    if (path == entry.end() || !path->is_string() || size == entry.end() ||
        !size->is_number_unsigned() || sha == entry.end() || !sha->is_string()) {
      return std::unexpected(Malformed("a file entry lacks path, size or sha256"));
    }
    ManifestFile file{.path = path->get<std::string>(), .size = size->get<std::uint64_t>()};
    if (auto valid = ValidateRelativePath(file.path); !valid) {
      return std::unexpected(Malformed(valid.error().message()));
    }
    if (!seen.insert(file.path).second) {
      return std::unexpected(Malformed(fmt::format("path {:?} appears twice", file.path)));
    }
    auto file_digest = core::ParseDigest(sha->get<std::string>());
    if (!file_digest) return std::unexpected(Malformed("a file sha256 is malformed"));
    file.sha256 = *file_digest;
    manifest.files.push_back(std::move(file));
  }
  return manifest;
}

}  // namespace modelplane::agent
