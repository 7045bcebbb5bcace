// Reads a ModelRevision manifest file as users write them for kubectl (YAML, or JSON), checks it
// the way the operator does, and turns it into what the fetch engine stages. Used by the
// standalone `fetch` command; the agent's control loop gets revisions from the API server.
// Thread safety: pure functions.
#pragma once

#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/api/model_revision.h"
#include "core/error/error.h"
#include "node-agent/fetch/fetch_engine.h"

namespace modelplane::agent {

struct LoadedRevision {
  core::api::ModelRevision revision;
  core::Sha256Bytes digest{};  // the revision digest (core/api/revision_digest.h)
};

// YAML scalars become JSON numbers, booleans or null only when unquoted and spelled as such.
[[nodiscard]] nlohmann::json YamlToJson(const YAML::Node& node);

// Errors name the file; an invalid spec lists every problem the validator found.
[[nodiscard]] core::Result<LoadedRevision> LoadRevisionFile(const std::string& path);
[[nodiscard]] core::Result<LoadedRevision> CheckRevision(core::api::ModelRevision revision);

// The files of the revision as the engine wants them (sources are added by the caller).
[[nodiscard]] core::Result<FetchRequest> MakeFetchRequest(const LoadedRevision& loaded);

}  // namespace modelplane::agent
