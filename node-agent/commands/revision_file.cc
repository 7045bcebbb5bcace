#include "node-agent/commands/revision_file.h"

#include <charconv>

#include <fmt/format.h>

#include "core/api/model_revision_validation.h"
#include "core/api/revision_digest.h"
#include "core/config/yaml_document.h"

namespace modelplane::agent {
namespace {

nlohmann::json ScalarToJson(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted: always a string
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  if (text == "null" || text == "~" || text.empty()) return nullptr;
  std::int64_t integer = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
  if (error == std::errc() && end == text.data() + text.size()) return integer;
  double number = 0;
  auto [double_end, double_error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (double_error == std::errc() && double_end == text.data() + text.size()) return number;
  return text;
}

}  // namespace

nlohmann::json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node) out[entry.first.Scalar()] = YamlToJson(entry.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& entry : node) out.push_back(YamlToJson(entry));
      return out;
    }
    case YAML::NodeType::Scalar: return ScalarToJson(node);
    default: return nullptr;
  }
}

core::Result<LoadedRevision> LoadRevisionFile(const std::string& path) {
  // A revision lists every file with its digest: allow far more than a config file.
  auto document = core::LoadYamlFile(path, {.max_bytes = 32u << 20, .max_depth = 32});
  if (!document) return std::unexpected(document.error());
  auto revision = core::api::ModelRevisionFromJson(YamlToJson(document->root));
  if (!revision) return std::unexpected(revision.error().Wrap(path));
  auto checked = CheckRevision(std::move(*revision));
  if (!checked) return std::unexpected(checked.error().Wrap(path));
  return checked;
}

core::Result<LoadedRevision> CheckRevision(core::api::ModelRevision revision) {
  const auto problems = core::api::ValidateModelRevisionSpec(revision.spec);
  if (auto status = core::api::ProblemsToStatus(problems); !status) {
    return std::unexpected(status.error());
  }
  auto digest_text = core::api::ComputeRevisionDigest(revision.spec);
  if (!digest_text) return std::unexpected(digest_text.error());
  auto digest = core::ParseDigest(*digest_text);
  if (!digest) return std::unexpected(digest.error());
  return LoadedRevision{.revision = std::move(revision), .digest = *digest};
}

core::Result<FetchRequest> MakeFetchRequest(const LoadedRevision& loaded) {
  FetchRequest request{.revision_digest = loaded.digest,
                       .name = fmt::format("{}/{}", loaded.revision.metadata.namespace_name,
                                           loaded.revision.metadata.name)};
  for (const core::api::ModelFile& file : loaded.revision.spec.files) {
    auto sha = core::ParseDigest(file.sha256);
    if (!sha) return std::unexpected(sha.error().Wrap(file.path));
    request.files.push_back(
        {.path = file.path, .size = static_cast<std::uint64_t>(file.size), .sha256 = *sha});
  }
  return request;
}

}  // namespace modelplane::agent
