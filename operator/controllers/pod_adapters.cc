#include "operator/controllers/pod_adapters.h"

#include <vector>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/api/object_key.h"
#include "core/api/serving_pod.h"
#include "core/api/source_proofs.h"
#include "core/json/json_lookup.h"
#include "operator/controllers/held_copies.h"
#include "operator/controllers/source_proofs.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;
namespace api = core::api;

AdapterHold Waiting(std::string message) {
  return {.type = "Normal", .reason = "WaitingForAdapter", .message = std::move(message)};
}

AdapterHold Refused(std::string reason, std::string message) {
  return {.type = "Warning",
          .reason = std::move(reason),
          .message = std::move(message) + "; the pod stays gated"};
}

}  // namespace

PodAdapterReader::PodAdapterReader(const core::ObjectStore& revisions,
                                   const core::ObjectStore& caches,
                                   core::ParsedObjects<api::ModelCache>& parsed_caches,
                                   std::string revision_key, std::string digest)
    : revisions_(revisions),
      caches_(caches),
      parsed_caches_(parsed_caches),
      revision_key_(std::move(revision_key)),
      revision_name_(revision_key_.substr(revision_key_.find('/') + 1)),
      digest_(std::move(digest)) {}

std::optional<PodAdapters> PodAdapterReader::Read(const json& pod) {
  const json* annotations = core::FindMember(pod, {"metadata", "annotations"});
  if (annotations == nullptr) return std::nullopt;
  const std::string value = core::StringMember(*annotations, {api::kAdaptersAnnotation});
  auto references = api::ParseAdaptersAnnotation(
      value, core::StringMember(pod, {"metadata", "namespace"}), revision_name_);
  if (!references) {
    // Edited after admission, which refused it then.
    return PodAdapters{.hold = Refused("AdaptersUnreadable", references.error().message())};
  }
  if (references->empty()) return std::nullopt;
  PodAdapters read;
  std::vector<std::string> keys;
  std::vector<api::LoraModule> modules;
  const std::string mount_path = api::MountPathOf(*annotations, revision_name_);
  for (const api::RevisionReference& reference : *references) {
    const Adapter& adapter = Find(reference);
    if (adapter.hold) return PodAdapters{.hold = adapter.hold};
    if (keys.empty()) {
      read.readiness.ready_nodes = adapter.ready_nodes;
    } else {
      std::erase_if(read.readiness.ready_nodes,
                    [&](const std::string& node) { return !adapter.ready_nodes.contains(node); });
    }
    keys.push_back(api::ObjectKey(reference.namespace_name, reference.name));
    modules.push_back({.name = api::AdapterEngineName(reference.name, adapter.digest),
                       .path = api::AdapterMountPath(mount_path, reference.name)});
  }
  read.readiness.adapters = fmt::format("{}", fmt::join(keys, ", "));
  read.lora_modules = api::LoraModulesValue(modules);
  return read;
}

const PodAdapterReader::Adapter& PodAdapterReader::Find(const api::RevisionReference& reference) {
  const std::string key = api::ObjectKey(reference.namespace_name, reference.name);
  if (const auto known = adapters_.find(key); known != adapters_.end()) return known->second;
  Adapter& adapter = adapters_[key];
  const core::ObjectPtr object = revisions_.Get(key);
  if (!object) {
    adapter.hold = Waiting(fmt::format(
        "waiting for adapter ModelRevision {}, which does not exist yet; the pod stays gated "
        "until it is created and staged beside its base",
        key));
    return adapter;
  }
  const json* base = core::FindMember(*object, {"spec", "base"});
  const std::string base_digest = core::StringMember(*object, {"spec", "base", "digest"});
  const std::string phase = core::StringMember(*object, {"status", "phase"});
  const std::string digest = core::StringMember(*object, {"status", "digest"});
  if (base == nullptr || !base->is_object()) {
    adapter.hold = Refused("NotAnAdapter", fmt::format("ModelRevision {} is not an adapter (it "
                                                       "has no spec.base): {} lists LoRA "
                                                       "adapter revisions only",
                                                       key, api::kAdaptersAnnotation));
  } else if (base_digest != digest_) {
    adapter.hold =
        Refused("AdapterBaseMismatch", fmt::format("adapter {} applies to base {}, not to "
                                                   "revision {}'s {}",
                                                   key, base_digest, revision_key_, digest_));
  } else if (phase == api::kPhaseInvalid) {
    adapter.hold = Refused("AdapterInvalid", fmt::format("adapter ModelRevision {} is invalid "
                                                         "(its Valid condition says why)",
                                                         key));
  } else if (phase == api::kPhaseRevoked) {
    adapter.hold =
        Refused("AdapterRevoked", fmt::format("adapter ModelRevision {} is revoked", key));
  } else if (digest.empty()) {
    adapter.hold =
        Waiting(fmt::format("waiting for adapter ModelRevision {}, which the operator has not "
                            "validated yet",
                            key));
  }
  if (adapter.hold) return adapter;
  adapter.digest = digest;
  // Held for another namespace's revision of the digest is not held for this one until its
  // own sources are shown to serve the bytes (core/api/source_proofs.h).
  const api::SourceProofs proofs =
      ObserveSourceProofs(caches_, parsed_caches_, adapter.digest, reference);
  ForEachHeldEntry(caches_, parsed_caches_, adapter.digest,
                   [&](const api::ModelCache& cache, const api::CachedRevision& cached) {
                     if (api::EntryForRevision(cached, cache.metadata.name, proofs).state ==
                         api::kCacheStateReady) {
                       adapter.ready_nodes.insert(cache.metadata.name);
                     }
                   });
  return adapter;
}

}  // namespace modelplane::controller
