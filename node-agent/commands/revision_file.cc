#include "node-agent/commands/revision_file.h"

#include <charconv>

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

}  // namespace modelplane::agent
