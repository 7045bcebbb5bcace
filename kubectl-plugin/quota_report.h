// `kubectl modelplane quota`: a namespace's ModelQuotas against what its revisions hold, for
// the tenant who owns it. The limits of each kind (the smallest of the namespace's ModelQuotas,
// core/api/model_quota.h), the usage the operator wrote into their status, the revisions the
// quotas cut, then one row per revision of the namespace: phase, prestage asked, whether it fits
// (its WithinQuota condition), with each refusal under the table. It reads only namespaced
// objects, so it works for a user who may not list ModelCaches and names no node.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error/error.h"

namespace modelplane::cli {

// `quotas` and `revisions` as the API server listed them in `namespace_name`. Fails only when
// a ModelQuota is not one the types can read.
[[nodiscard]] core::Result<std::string> RenderNamespaceQuota(
    const std::string& namespace_name, const std::vector<nlohmann::json>& quotas,
    const std::vector<nlohmann::json>& revisions);

}  // namespace modelplane::cli
