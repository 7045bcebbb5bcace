// Where an adapter revision (a LoRA adapter: spec.base names its base revision's digest) is
// staged: beside its base. On every node whose ModelCache spec lists a revision of the
// adapter's namespace with that digest, the adapter gets an entry with the base entry's reason
// and pin, so it is prestaged, pinned for a rollback and let go together with its base; when
// the base's entry goes, so does the adapter's (and the agent purges it). Revisions of other
// namespaces with the same digest do not count: a namespace is a wall.
// Thread safety: pure functions over informer stores (which are thread-safe).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_cache.h"
#include "core/kube/object_store.h"
#include "core/kube/parsed_objects.h"
#include "operator/controllers/entry_intent.h"

namespace modelplane::controller {

// ModelRevision index: spec.base.digest of adapter revisions.
inline constexpr char kRevisionsByBaseDigest[] = "modelplane.io/spec-base-digest";
[[nodiscard]] core::IndexFunction RevisionsByBaseDigestIndex();

// The entries the adapter wants, by node: the base's reason and pin on each node that lists a
// revision of `namespace_name` whose status.digest is `base_digest`. Where several such
// revisions share a node, the adapter is pinned if any of their entries is.
[[nodiscard]] std::map<std::string, EntryIntent> EntriesBesideBase(
    const core::ObjectStore& revisions, const core::ObjectStore& caches,
    core::ParsedObjects<core::api::ModelCache>& parsed_caches, std::string_view namespace_name,
    std::string_view base_digest);

// Keys of the adapter revisions of the revisions named by `keys` ("namespace/name"): those of
// the same namespace whose spec.base.digest is the named revision's status.digest. Whoever
// changes where a base is wakes its adapters with these.
[[nodiscard]] std::vector<std::string> AdapterKeysOf(const core::ObjectStore& revisions,
                                                     const std::vector<std::string>& keys);

}  // namespace modelplane::controller
