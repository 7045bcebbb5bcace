// How the operator reads and writes ModelCache spec entries, shared by the ModelRevision
// controller (its own entries) and the ModelCache controller (entries of revisions that are
// gone), plus the informer indexes that map caches and revisions onto each other.
//
// spec.revisions is an atomic list in the CRD (no list-map keys), so the operator writes it
// whole, with server-side apply under one field manager, guarded by the resourceVersion it read:
// two writers racing on one ModelCache get a 409 and the loser retries with a fresh view instead
// of dropping the winner's entry. The operator's own writers take turns per cache and start from
// the newest copy it knows (core/kube/latest_objects.h), so a 409 means another client wrote.
// Thread safety: free functions; the KubeClient is thread-safe.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/model_cache.h"
#include "core/error/error.h"
#include "core/kube/kube_client.h"
#include "core/kube/latest_objects.h"
#include "core/kube/object_store.h"

namespace modelplane::controller {

namespace api = core::api;

inline constexpr std::string_view kFieldManager = "modelplane-operator";
inline constexpr std::string_view kCacheEntriesFinalizer = "modelplane.io/cache-entries";

// ModelCache index: "namespace/name" of every revision its spec lists.
inline constexpr char kCachesByRevision[] = "modelplane.io/spec-revision";
// ModelRevision index: its status.digest.
inline constexpr char kRevisionsByDigest[] = "modelplane.io/status-digest";
// ModelCaches by the digests their status lists (what each node holds, stages or purges).
inline constexpr char kCachesByHeldDigest[] = "modelplane.io/held-digest";
// ModelRevisions by the sha256 of each file their spec lists: revisions that share files.
inline constexpr char kRevisionsByFile[] = "modelplane.io/spec-file";

[[nodiscard]] std::string RevisionKey(const api::RevisionReference& reference);
[[nodiscard]] core::IndexFunction CachesByRevisionIndex();
[[nodiscard]] core::IndexFunction RevisionsByDigestIndex();
[[nodiscard]] core::IndexFunction CachesByHeldDigestIndex();
[[nodiscard]] core::IndexFunction RevisionsByFileIndex();

// Read straight from the JSON (no full parse), for event handlers.
[[nodiscard]] std::vector<std::string> SpecRevisionKeys(const nlohmann::json& cache);
[[nodiscard]] std::vector<std::string> StatusDigests(const nlohmann::json& cache);

// What changed between two versions of a cache, so an update wakes only the revisions it
// concerns (a cache listing hundreds of revisions changes one entry at a time):
// revision keys whose spec entry was added, removed or changed, and digests whose status entry
// was.
[[nodiscard]] std::vector<std::string> ChangedSpecRevisionKeys(const nlohmann::json& before,
                                                               const nlohmann::json& after);
[[nodiscard]] std::vector<std::string> ChangedStatusDigests(const nlohmann::json& before,
                                                            const nlohmann::json& after);

// The cache's spec entries with every entry for `revision` removed and, when `desired` is set,
// `*desired` in place of the first of them (or appended): other entries keep their order.
[[nodiscard]] std::vector<api::DesiredRevision> ReplaceEntry(
    const std::vector<api::DesiredRevision>& entries, const api::RevisionReference& revision,
    const api::DesiredRevision* desired);

// Server-side apply of spec.revisions, with `cache`'s metadata.resourceVersion as precondition
// (kConflict when someone wrote it since). Returns the API server's answer: the cache as written.
[[nodiscard]] core::Result<nlohmann::json> ApplyCacheEntries(
    core::KubeClient& client, const nlohmann::json& cache,
    const std::vector<api::DesiredRevision>& entries);

using EntriesChange = std::function<std::vector<api::DesiredRevision>(
    const std::vector<api::DesiredRevision>& entries)>;

// Rewrites the named cache's spec entries through `change`, writing only when they differ.
// Writers of one cache in this process take turns, and each starts from the newest copy this
// process knows (`latest`: the informer's, or the API server's answer to a write the informer
// has not delivered yet), so the operator's own writes do not make each other conflict. On a
// conflict all the same (another client wrote, the node agent's status among them) it reads the
// cache afresh from the API server and tries again, up to kCacheWriteAttempts, as client-go's
// RetryOnConflict does: hundreds of revisions on one busy ModelCache then settle within their
// reconciles instead of through the work queue's rate limiter. Returns whether it wrote; false
// too when the informer holds no such cache.
inline constexpr int kCacheWriteAttempts = 8;
[[nodiscard]] core::Result<bool> UpdateCacheEntries(core::KubeClient& client,
                                                    core::LatestObjects& latest,
                                                    const core::ObjectStore& caches,
                                                    const std::string& name,
                                                    const EntriesChange& change);

}  // namespace modelplane::controller
