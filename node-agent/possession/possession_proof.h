// The check behind reusing bytes across revisions: a node that holds a file's verified bytes
// (for some revision) serves them for another revision only once that revision's own sources
// served the same bytes at sampled ranges (possession_sample.h). Without it a tenant could copy
// another namespace's file list (paths, sizes, sha256) into a revision naming a source it
// cannot read, and be served bytes it never had access to.
//
// Errors: kDataLoss when a source served different bytes (or, when no source answered, held a
// truncated file); otherwise, when every source failed for a range, the most telling of their
// errors (access refused, then not found, then unavailable), wrapped with the file's path.
// kConflict when the node no longer holds a verified copy of a file; kInvalidArgument when no
// source can be asked. Messages name sources and the revision's file paths, never content or
// digests; local blob paths appear only in local read errors, which stay in the agent's log.
// Thread safety: a free function; sources must allow concurrent ReadRange (range_source.h), the
// catalog concurrent lookups (blob_catalog.h).
#pragma once

#include <vector>

#include "core/error/error.h"
#include "node-agent/fetch/range_source.h"
#include "node-agent/possession/possession_sample.h"
#include "node-agent/store/blob_catalog.h"

namespace modelplane::agent {

// The sources a proof asks: every one but peers. A peer holds bytes it verified for some
// revision, possibly the one being copied, so its answer shows nothing about this revision's
// right to them.
[[nodiscard]] std::vector<RangeSource*> PossessionSources(const std::vector<RangeSource*>& sources);

// Reads every sampled range of `files` from the node's verified copy (`catalog`) and from the
// sources in order; the first source that answers a range decides it. `context` bounds every
// read (one deadline for the whole proof, and its cancellation).
[[nodiscard]] core::Status ProveSourcesServe(const std::vector<SourceFile>& files,
                                             const std::vector<SampledRange>& sample,
                                             const std::vector<RangeSource*>& sources,
                                             const BlobCatalog& catalog,
                                             const ReadContext& context);

}  // namespace modelplane::agent
