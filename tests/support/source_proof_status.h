// What an agent reports, besides a digest's state, for revisions whose bytes it read from their
// own sources (core/api/source_proofs.h): tests that write ModelCache statuses in the agents'
// place use it so that the operator, the extender and the plugin read those statuses as a real
// agent's.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/api/model_revision.h"
#include "core/api/revision_digest.h"
#include "core/kube/kube_client.h"
#include "core/kube/resource_type.h"

namespace modelplane::testing {

// `revisions`: status.revisions entries. Each Ready entry without `sourceProofs` gets a Proven
// proof for every ModelRevision of `namespace_name` whose digest (computed from its spec) is the
// entry's, as the agent reports after staging them from their own sources.
inline nlohmann::json WithOwnSourceProofs(core::KubeClient& client,
                                          const std::string& namespace_name,
                                          nlohmann::json revisions) {
  auto listed = client.ListAll(core::resources::ModelRevisions(), namespace_name, {});
  if (!listed) return revisions;
  for (nlohmann::json& entry : revisions) {
    if (entry.value("state", "") != "Ready" || entry.contains("sourceProofs")) continue;
    nlohmann::json proofs = nlohmann::json::array();
    for (const nlohmann::json& object : listed->items) {
      auto revision = core::api::ModelRevisionFromJson(object);
      if (!revision) continue;
      auto digest = core::api::ComputeRevisionDigest(revision->spec);
      if (!digest || *digest != entry.value("digest", "")) continue;
      proofs.push_back(
          {{"revision", {{"namespace", namespace_name}, {"name", revision->metadata.name}}},
           {"state", "Proven"}});
    }
    entry["sourceProofs"] = std::move(proofs);
  }
  return revisions;
}

}  // namespace modelplane::testing
