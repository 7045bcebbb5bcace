// Loading a whole configuration file into its struct: LoadYamlFile/LoadYamlString (bounded,
// located errors) followed by the binder (config_map.h).
//
//   auto config = LoadConfigFile<AgentConfig>("/etc/modelplane/agent.yaml");
//   if (!config) { log the error (it names file, line and field); exit non-zero; }
//
// T must be default-constructible, with defaults for its optional fields, and have a
// BindConfig(ConfigMap&, T&). An empty file binds to an empty map: all defaults, and errors for
// required fields.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/config/config_map.h"
#include "core/config/yaml_document.h"

namespace modelplane::core {

template <ConfigStruct T>
[[nodiscard]] Result<T> BindConfigDocument(const YamlDocument& document) {
  ConfigContext context(document.source_name);
  T config{};
  ReadConfigValue(ConfigValue{context, document.root, "", document.root.Mark()}, config);
  if (auto status = context.status(); !status) return std::unexpected(status.error());
  return config;
}

template <ConfigStruct T>
[[nodiscard]] Result<T> LoadConfigString(std::string_view text,
                                         std::string source_name = "<string>",
                                         const YamlLimits& limits = {}) {
  auto document = LoadYamlString(text, std::move(source_name), limits);
  if (!document) return std::unexpected(document.error());
  return BindConfigDocument<T>(*document);
}

template <ConfigStruct T>
[[nodiscard]] Result<T> LoadConfigFile(const std::string& path, const YamlLimits& limits = {}) {
  auto document = LoadYamlFile(path, limits);
  if (!document) return std::unexpected(document.error());
  return BindConfigDocument<T>(*document);
}

}  // namespace modelplane::core
