// A synthetic fleet for the extender benchmark: ModelRevisions in families that share weight
// files (a new config, a fine-tune of some layers) and one ModelCache per node whose status
// holds 5-20 of them in every state an agent reports, as the API objects the informers would
// deliver. Deterministic for a seed, so runs compare.
// Thread safety: a plain value; build it once, read it from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"

namespace modelplane::bench {

struct FleetShape {
  std::size_t nodes = 5000;
  std::size_t revisions = 200;  // in families of 5
  std::size_t min_held = 5;     // revisions per node's status
  std::size_t max_held = 20;
  double nodes_without_cache = 0.01;    // Node objects whose ModelCache does not exist yet
  double caches_without_status = 0.01;  // ModelCaches no agent has reported into yet
  std::uint64_t seed = 17;
};

struct SyntheticFleet {
  std::vector<core::api::ModelRevision> revisions;
  std::vector<core::api::ModelCache> caches;
  std::vector<std::string> node_names;  // every node, with or without a ModelCache
  // How often pods name each revision (popular families are held on many nodes and asked for
  // more); indexes into `revisions`.
  std::vector<double> popularity;
};

[[nodiscard]] SyntheticFleet MakeSyntheticFleet(const FleetShape& shape);

}  // namespace modelplane::bench
