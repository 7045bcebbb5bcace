// One page of a Hub tree listing (GET /api/models/{repo}/tree/{commit}?recursive=true) and the
// Link header that leads to the next one.
//
// A page is a JSON array of entries {type, path, size, oid, lfs?: {oid, size, pointerSize}}.
// Directories are dropped. For an LFS file lfs.oid is the sha256 of the content and lfs.size
// its size (the entry's own oid is the git SHA-1 of the pointer, never used); a plain git file
// has no sha256 on the Hub at all, so the importer downloads and hashes it.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/hub/hub_file.h"

namespace modelplane::core {

// The files of one page. HubMalformedAnswer when the page is not such an array (or an entry's
// field is missing or out of grammar), HubListingMismatch when an LFS entry's two sizes differ.
[[nodiscard]] Result<std::vector<HubFile>> ParseTreePage(std::string_view body);

// The target of the rel="next" link in a Link header (RFC 8288), as written; nullopt when there
// is none (the last page).
[[nodiscard]] std::optional<std::string> NextPageLink(std::string_view link_header);

}  // namespace modelplane::core
