// What the node's retention weighs on a pass of the control loop (cache_retention.h): every
// revision the store holds, every one the ModelCache wants, and every revoked one with bytes
// still here, each with who uses it, what protects it and where else it is held Ready (the
// operator's holdings, read through the index).
// Thread safety: a pure function of its inputs.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_cache.h"
#include "node-agent/controller/cache_retention.h"
#include "node-agent/controller/revision_index.h"
#include "node-agent/controller/stager.h"
#include "node-agent/csi/volume_leases.h"
#include "node-agent/store/cache_store.h"

namespace modelplane::agent {

struct RetentionInputs {
  const RevisionIndex& index;
  const CacheStore& store;
  const Stager* stager = nullptr;  // its queued and running stagings are reserved
  const std::vector<VolumeLease>& leases;
  const std::map<std::string, std::set<std::string>>& pod_users;  // "ns/name" -> live pod uids
  const std::map<core::Sha256Bytes, bool>& wanted;                // the ModelCache's wish -> pinned
};

[[nodiscard]] std::vector<RevisionFacts> CollectRetentionFacts(const RetentionInputs& inputs);

}  // namespace modelplane::agent
