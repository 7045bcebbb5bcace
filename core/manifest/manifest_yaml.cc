#include "core/manifest/manifest_yaml.h"

#include <charconv>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace modelplane::core {
namespace {

bool LooksLikeNonString(const std::string& text) {
  if (text.empty()) return true;
  static constexpr std::string_view kWords[] = {
      "true", "false", "yes", "no",  "on",   "off",  "null", "~",     "y",   "n",  "True", "False",
      "Yes",  "No",    "On",  "Off", "Null", "NULL", "TRUE", "FALSE", "YES", "NO", "ON",   "OFF"};
  for (const std::string_view word : kWords) {
    if (text == word) return true;
  }
  const char first = text.front();
  return (first >= '0' && first <= '9') || first == '-' || first == '+' || first == '.';
}

void Emit(YAML::Emitter& out, const nlohmann::json& value) {
  if (value.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [key, item] : value.items()) {
      out << YAML::Key << key << YAML::Value;
      Emit(out, item);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& item : value) Emit(out, item);
    out << YAML::EndSeq;
  } else if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (LooksLikeNonString(text)) out << YAML::DoubleQuoted;
    out << text;
  } else if (value.is_boolean()) {
    out << value.get<bool>();
  } else if (value.is_number_integer()) {
    out << value.get<std::int64_t>();
  } else if (value.is_number()) {
    out << value.get<double>();
  } else {
    out << YAML::Null;
  }
}

nlohmann::json ToJsonValue(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& item : node) out[item.first.as<std::string>()] = ToJsonValue(item.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(ToJsonValue(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (node.Tag() == "!") return text;  // quoted: always a string
      if (text == "true") return true;
      if (text == "false") return false;
      std::int64_t integer = 0;
      if (const auto [end, error] =
              std::from_chars(text.data(), text.data() + text.size(), integer);
          error == std::errc() && end == text.data() + text.size()) {
        return integer;
      }
      return text;
    }
    default: return nullptr;
  }
}

}  // namespace

std::string RevisionToYaml(const api::ModelRevision& revision) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  Emit(out, api::ToJson(revision));
  return std::string(out.c_str()) + "\n";
}

Result<api::ModelRevision> RevisionFromYaml(std::string_view text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& error) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("manifest is not YAML: {}", error.what()));
  }
  return api::ModelRevisionFromJson(ToJsonValue(root));
}

}  // namespace modelplane::core
