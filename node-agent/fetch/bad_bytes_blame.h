// Which sources answer for a file whose bytes did not match its digest.
//
// A file is hashed whole, so when several sources served parts of it the hash cannot say whose
// bytes were wrong. Barring all of them could bar the honest one too (say a peer lied, was
// cooled down by another file's failure, and the object store served this file's remaining
// ranges): the file would then have no source left although one is good. So:
//   1. contributors already distrusted elsewhere (SourceHealth no longer lets them serve this
//      blob) answer for it, and only they;
//   2. otherwise a sole contributor answers for it;
//   3. otherwise every contributor but the last in preference order answers for it. The last is
//      the most authoritative (sources are ordered peer, shared filesystem, then the spec's
//      origins and object stores), and keeps serving: the file is fetched again without the
//      others, so a second mismatch narrows the blame further.
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <vector>

namespace modelplane::agent {

// `contributors` are source indexes (lower is preferred); `distrusted` says whether a source
// is already barred from this blob.
[[nodiscard]] std::vector<std::size_t> ChooseBlamedSources(
    const std::set<std::size_t>& contributors, const std::function<bool(std::size_t)>& distrusted);

}  // namespace modelplane::agent
