// Reads a ModelRevision manifest file as users write them for kubectl (YAML, or JSON) and checks
// it the way the operator does (node-agent/revision/loaded_revision.h). Used by the standalone
// `fetch` command; the agent's control loop gets revisions from the API server.
// Thread safety: pure functions.
#pragma once

#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/error/error.h"
#include "node-agent/revision/loaded_revision.h"

namespace modelplane::agent {

// YAML scalars become JSON numbers, booleans or null only when unquoted and spelled as such.
[[nodiscard]] nlohmann::json YamlToJson(const YAML::Node& node);

// Errors name the file; an invalid spec lists every problem the validator found.
[[nodiscard]] core::Result<LoadedRevision> LoadRevisionFile(const std::string& path);

}  // namespace modelplane::agent
