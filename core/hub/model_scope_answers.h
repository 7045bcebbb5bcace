// ModelScope's JSON answers an import reads, inside its envelope {"Code": 200, "Data": ...,
// "Message": ..., "Success": true} (e2e/hub/modelscope_handler.py describes the service, as read
// from the modelscope client and other clients' notes):
//
//   the listing   Data {"Files": [{Path, Type "blob"|"tree", Size, Sha256, IsLFS, ...}]}, with
//                 "Files": null for a revision the repository lacks (not an error status);
//   revisions     Data {"RevisionMap": {"Branches": [...], "Tags": [...]}}, each {Revision,
//                 CommitId, CreatedAt}. The modelscope client reads only Revision; CommitId is
//                 what other clients read for the commit a branch or tag names.
//
// Unlike the Hugging Face Hub, ModelScope lists a sha256 for every file, LFS or not.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/hub/hub_file.h"

namespace modelplane::core {

// The files of a listing (folders dropped); nullopt when "Files" is null (no such revision).
// HubMalformedAnswer when the answer is not such an envelope or an entry is out of grammar.
[[nodiscard]] Result<std::optional<std::vector<HubFile>>> ParseModelScopeFiles(
    std::string_view body);

// The commit the branch or tag `revision` names (tags first, as the client lists them);
// nullopt when it names none. HubMalformedAnswer when the answer is not such an envelope or
// the entry carries no commit.
[[nodiscard]] Result<std::optional<std::string>> CommitOfModelScopeRevision(
    std::string_view body, std::string_view revision);

}  // namespace modelplane::core
