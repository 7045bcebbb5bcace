#include "core/hub/model_scope_answers.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/api/hub_source.h"
#include "core/hub/hub_errors.h"
#include "core/json/json_document.h"

namespace modelplane::core {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxModelScopePathLength = 4096;

Error MalformedModelScopeAnswer(std::string_view what, std::string_view problem) {
  return HubRefusal(HubReason::kMalformedAnswer, fmt::format("ModelScope's {}: {}", what, problem));
}

// The envelope's Data, after its Code said success.
Result<json> EnvelopeData(std::string_view body, std::string_view what) {
  auto document = ParseJsonDocument(body, {.max_bytes = body.size(), .max_depth = 8});
  if (!document)
    return std::unexpected(MalformedModelScopeAnswer(what, document.error().message()));
  if (!document->is_object()) {
    return std::unexpected(MalformedModelScopeAnswer(what, "not a JSON object"));
  }
  const auto code = document->find("Code");
  if (code == document->end() || !code->is_number_integer() || code->get<std::int64_t>() != 200) {
    const auto message = document->find("Message");
    return std::unexpected(MalformedModelScopeAnswer(
        what,
        fmt::format("no success code (Message: {})",
                    message != document->end() && message->is_string() ? message->get<std::string>()
                                                                       : "none")));
  }
  const auto data = document->find("Data");
  if (data == document->end()) return std::unexpected(MalformedModelScopeAnswer(what, "no Data"));
  return *data;
}

std::optional<std::string> LowerHexDigest(const json& value) {
  if (!value.is_string()) return std::nullopt;
  std::string digest = value.get<std::string>();
  if (digest.size() != 64) return std::nullopt;
  for (char& c : digest) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  return digest;
}

Result<HubFile> ParseModelScopeFile(const json& entry, std::size_t index) {
  const auto problem = [index](std::string_view what) {
    return std::unexpected(
        MalformedModelScopeAnswer("listing", fmt::format("entry {}: {}", index, what)));
  };
  HubFile file;
  const auto path = entry.find("Path");
  if (path == entry.end() || !path->is_string() || path->get_ref<const std::string&>().empty() ||
      path->get_ref<const std::string&>().size() > kMaxModelScopePathLength) {
    return problem("no Path");
  }
  file.path = path->get<std::string>();
  const auto size = entry.find("Size");
  if (size == entry.end() || !size->is_number_integer() || size->get<std::int64_t>() < 0) {
    return problem(fmt::format("{}: no Size", file.path));
  }
  file.size = size->get<std::int64_t>();
  if (const auto sha256 = entry.find("Sha256"); sha256 != entry.end() && !sha256->is_null()) {
    std::optional<std::string> digest = LowerHexDigest(*sha256);
    if (!digest) return problem(fmt::format("{}: Sha256 is not a sha256", file.path));
    file.sha256 = std::move(*digest);
  }
  const auto lfs = entry.find("IsLFS");
  file.lfs = lfs != entry.end() && lfs->is_boolean() && lfs->get<bool>();
  return file;
}

}  // namespace

Result<std::optional<std::vector<HubFile>>> ParseModelScopeFiles(std::string_view body) {
  auto data = EnvelopeData(body, "listing");
  if (!data) return std::unexpected(data.error());
  const auto listed = data->is_object() ? data->find("Files") : data->end();
  if (listed == data->end()) {
    return std::unexpected(MalformedModelScopeAnswer("listing", "no Files"));
  }
  if (listed->is_null()) return std::nullopt;
  if (!listed->is_array()) {
    return std::unexpected(MalformedModelScopeAnswer("listing", "Files is not an array"));
  }
  std::vector<HubFile> files;
  for (std::size_t index = 0; index < listed->size(); ++index) {
    const json& entry = (*listed)[index];
    const auto type = entry.is_object() ? entry.find("Type") : entry.end();
    if (type == entry.end() || !type->is_string()) {
      return std::unexpected(
          MalformedModelScopeAnswer("listing", fmt::format("entry {}: no Type", index)));
    }
    if (*type != "blob") continue;  // "tree": a folder, whose files are listed on their own
    auto file = ParseModelScopeFile(entry, index);
    if (!file) return std::unexpected(file.error());
    files.push_back(std::move(*file));
  }
  return files;
}

Result<std::optional<std::string>> CommitOfModelScopeRevision(std::string_view body,
                                                              std::string_view revision) {
  auto data = EnvelopeData(body, "revisions");
  if (!data) return std::unexpected(data.error());
  const auto map = data->is_object() ? data->find("RevisionMap") : data->end();
  if (map == data->end() || !map->is_object()) {
    return std::unexpected(MalformedModelScopeAnswer("revisions", "no RevisionMap"));
  }
  for (const char* kind : {"Tags", "Branches"}) {
    const auto entries = map->find(kind);
    if (entries == map->end() || !entries->is_array()) continue;
    for (const json& entry : *entries) {
      const auto name = entry.is_object() ? entry.find("Revision") : entry.end();
      if (name == entry.end() || !name->is_string() ||
          name->get_ref<const std::string&>() != revision) {
        continue;
      }
      const auto commit = entry.find("CommitId");
      if (commit == entry.end() || !commit->is_string() ||
          !api::CheckHubCommit(commit->get_ref<const std::string&>()).empty()) {
        return std::unexpected(MalformedModelScopeAnswer(
            "revisions", fmt::format("{} names no commit (CommitId)", revision)));
      }
      return commit->get<std::string>();
    }
  }
  return std::nullopt;
}

}  // namespace modelplane::core
