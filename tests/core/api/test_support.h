// Helpers shared by the core/api tests: reading repository files and converting YAML manifests
// to JSON the way kubectl does, so tests exercise the same JSON the API server would send.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace modelplane::core::api::testing {

inline std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(MODELPLANE_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Plain scalars become integers, booleans or null when they look like one (YAML 1.2 core
// schema, enough for our manifests); quoted scalars stay strings.
inline nlohmann::json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node) out[entry.first.as<std::string>()] = YamlToJson(entry.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (node.Tag() == "!") return text;
      if (text == "true") return true;
      if (text == "false") return false;
      if (text == "null" || text == "~") return nullptr;
      if (!text.empty() && text.find_first_not_of("-0123456789") == std::string::npos &&
          text != "-") {
        return std::stoll(text);
      }
      return text;
    }
    default: return nullptr;
  }
}

inline nlohmann::json LoadYamlAsJson(const std::string& relative) {
  return YamlToJson(YAML::Load(ReadSourceFile(relative)));
}

}  // namespace modelplane::core::api::testing
