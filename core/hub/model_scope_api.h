// The part of ModelScope's API an import needs (e2e/hub/modelscope_handler.py describes it, as
// read from the modelscope client):
//
//   ResolveCommit  a commit (40 hex digits) as given; a branch or tag through
//                  GET /api/v1/models/{repo}/revisions and the CommitId it lists for it;
//   ListFiles      GET /api/v1/models/{repo}/repo/files?Revision={commit}&Recursive=True, one
//                  answer with every file and its sha256 ("Files": null: no such revision).
//                  The service cuts a listing short at 3000 entries without saying so, so a
//                  listing that long is refused (HubAnswerTooLarge) rather than imported short;
//   ReadFile       GET /api/v1/models/{repo}/repo?Revision={commit}&FilePath={path}: a small
//                  file's bytes, or an LFS file's 302 to the CDN.
//
// The token travels as "Authorization: Bearer" and as the m_session_id cookie, as the client
// sends it; transport, bounds and waits: hub_transport.h.
// Thread safety: one thread at a time.
#pragma once

#include <cstddef>
#include <memory>

#include "core/hub/hub_api.h"
#include "core/hub/hub_transport.h"

namespace modelplane::core {

// Entries at which the service is known to cut a listing short.
inline constexpr std::size_t kModelScopeListingCut = 3000;

class ModelScopeApi final : public HubApi {
 public:
  explicit ModelScopeApi(std::unique_ptr<HubTransport> transport)
      : transport_(std::move(transport)) {}

  [[nodiscard]] Result<std::string> ResolveCommit(const std::string& repository,
                                                  const std::string& revision) override;
  [[nodiscard]] Result<std::vector<HubFile>> ListFiles(const std::string& repository,
                                                       const std::string& commit) override;
  [[nodiscard]] Result<HubFileContent> ReadFile(const std::string& repository,
                                                const std::string& commit, const HubFile& file,
                                                std::size_t keep_limit) override;

 private:
  std::unique_ptr<HubTransport> transport_;
};

}  // namespace modelplane::core
