// How the operator reads and writes ModelCache spec entries, shared by the ModelRevision
// controller (its own entries) and the ModelCache controller (entries of revisions that are
// gone), plus the informer indexes that map caches and revisions onto each other.
//
// spec.revisions is an atomic list in the CRD (no list-map keys), so the operator writes it
// whole, with server-side apply under one field manager, guarded by the resourceVersion it read:
// two writers racing on one ModelCache get a 409 and the loser retries with a fresh view instead
// of dropping the winner's entry.
// Thread safety: free functions; the KubeClient is thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/model_cache.h"
#include "core/error/error.h"
#include "core/kube/kube_client.h"
#include "core/kube/object_store.h"

namespace modelplane::controller {

namespace api = core::api;

inline constexpr std::string_view kFieldManager = "modelplane-operator";
inline constexpr std::string_view kCacheEntriesFinalizer = "modelplane.io/cache-entries";

// ModelCache index: "namespace/name" of every revision its spec lists.
inline constexpr char kCachesByRevision[] = "modelplane.io/spec-revision";
// ModelRevision index: its status.digest.
inline constexpr char kRevisionsByDigest[] = "modelplane.io/status-digest";

[[nodiscard]] std::string RevisionKey(const api::RevisionReference& reference);
[[nodiscard]] core::IndexFunction CachesByRevisionIndex();
[[nodiscard]] core::IndexFunction RevisionsByDigestIndex();

// Read straight from the JSON (no full parse), for event handlers.
[[nodiscard]] std::vector<std::string> SpecRevisionKeys(const nlohmann::json& cache);
[[nodiscard]] std::vector<std::string> StatusDigests(const nlohmann::json& cache);

// The cache's spec entries with every entry for `revision` removed and, when `desired` is set,
// `*desired` in place of the first of them (or appended): other entries keep their order.
[[nodiscard]] std::vector<api::DesiredRevision> ReplaceEntry(
    const std::vector<api::DesiredRevision>& entries, const api::RevisionReference& revision,
    const api::DesiredRevision* desired);

// Server-side apply of spec.revisions, with `cache`'s metadata.resourceVersion as precondition
// (kConflict when someone wrote it since).
[[nodiscard]] core::Status ApplyCacheEntries(core::KubeClient& client, const nlohmann::json& cache,
                                             const std::vector<api::DesiredRevision>& entries);

}  // namespace modelplane::controller
