// The identity of the storage behind a revision's source: what a fetch budget, a grant and the
// agents' telemetry are counted against. Two revisions that name the same bucket under
// different source names share one identity (and one budget); two sources that happen to share
// a name but point at different buckets do not.
//
//   objectStore      "objectStore/<endpoint>/<bucket>"   endpoint as written, lower-cased, without
//                                                         a trailing slash; "aws:<region>" when
//                                                         the source names none
//   http             "http/<scheme>://<host[:port]>"     the origin of base_url
//   sharedFilesystem "sharedFilesystem/<path>"            without a trailing slash
//   huggingFace,     "hub/<scheme>://<host[:port]>"      the hub's endpoint (hub_source.h): one
//   modelScope                                           budget per hub, across repositories
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/api/model_revision.h"

namespace modelplane::core::api {

[[nodiscard]] std::string SourceIdentity(const ModelSource& source);

// Whether a tier is one of a revision's own sources (object store, HTTP origin, hub, shared
// filesystem), as opposed to a node's cache or a peer.
[[nodiscard]] bool IsSourceTier(std::string_view tier);

// The tier an identity belongs to (its first segment), or "" for one that is not a source's.
[[nodiscard]] std::string_view SourceIdentityTier(std::string_view identity);

}  // namespace modelplane::core::api
