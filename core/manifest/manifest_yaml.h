// ModelRevision <-> YAML text, for manifests people read, edit and `kubectl apply`.
//
// Emitting goes through the JSON form (core/api ToJson), so the YAML has exactly the fields and
// names the API server sees. Strings that YAML would read as something else (numbers, booleans,
// null, empty) are double-quoted. Parsing maps quoted scalars to strings and plain ones to
// numbers or booleans when they look like one, then uses core/api's JSON parser.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/api/model_revision.h"
#include "core/error/error.h"

namespace modelplane::core {

[[nodiscard]] std::string RevisionToYaml(const api::ModelRevision& revision);

[[nodiscard]] Result<api::ModelRevision> RevisionFromYaml(std::string_view text);

}  // namespace modelplane::core
