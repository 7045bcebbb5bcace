// What a revision's gating pass needs of the LoRA adapters its gated pods name
// (modelplane.io/adapters): whether each can serve the pod (it exists, is an adapter of this
// revision's digest, is valid and not revoked), the nodes where all of them are Ready for the
// pod's namespace, and the modelplane.io/lora-modules value the pod is let go with.
//
// An adapter is judged by what its own pass wrote (status.digest and phase), not validated
// again here; until that pass has run the pod waits for it. A pod whose adapter cannot serve it
// stays gated with an Event that says why, as a pod whose revision cannot does.
// Thread safety: one reader per pass, on one thread; the stores it reads are thread-safe.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/api/model_cache.h"
#include "core/kube/object_store.h"
#include "core/kube/parsed_objects.h"
#include "operator/gating/gate_planner.h"

namespace modelplane::controller {

// Why a pod must wait whatever the caches hold: its Event.
struct AdapterHold {
  std::string type;  // "Normal" while it may come right, "Warning" when someone must act
  std::string reason;
  std::string message;
};

struct PodAdapters {
  std::optional<AdapterHold> hold;  // set: the pod waits for this, not for nodes
  AdapterReadiness readiness;       // where every adapter is Ready
  std::string lora_modules;         // the modelplane.io/lora-modules value to let it go with
};

class PodAdapterReader {
 public:
  // `caches` must carry the kCachesByHeldDigest index. `revision_key` ("namespace/name") and
  // `digest` are the revision the pods name in modelplane.io/revision.
  PodAdapterReader(const core::ObjectStore& revisions, const core::ObjectStore& caches,
                   core::ParsedObjects<core::api::ModelCache>& parsed_caches,
                   std::string revision_key, std::string digest);

  // nullopt when the pod names no adapters.
  [[nodiscard]] std::optional<PodAdapters> Read(const nlohmann::json& pod);

 private:
  struct Adapter {
    std::optional<AdapterHold> hold;
    std::string digest;
    std::set<std::string> ready_nodes;
  };
  // Each adapter is read once per pass, however many pods name it.
  const Adapter& Find(const core::api::RevisionReference& reference);

  const core::ObjectStore& revisions_;
  const core::ObjectStore& caches_;
  core::ParsedObjects<core::api::ModelCache>& parsed_caches_;
  const std::string revision_key_;
  const std::string revision_name_;
  const std::string digest_;
  std::map<std::string, Adapter> adapters_;  // by key
};

}  // namespace modelplane::controller
