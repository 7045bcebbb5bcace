// The part of the Hugging Face Hub's API an import needs, against the Hub or a mirror that
// follows the HF_ENDPOINT convention (the same paths under another base URL):
//
//   ResolveCommit  GET /api/models/{repo}/revision/{rev}: a branch, tag or commit to the
//                  commit (`sha`) every later request names, so a branch that moves
//                  mid-import moves nothing;
//   ListFiles      GET /api/models/{repo}/tree/{commit}?recursive=true, following each page's
//                  Link rel="next" (absolute, on the endpoint's origin), at most max_tree_pages
//                  pages and max_tree_files files; LFS files carry their sha256, plain git
//                  files none (hub_tree_page.h);
//   ReadFile       GET /{repo}/resolve/{commit}/{path}: a plain git file through the Hub's 307
//                  to /api/resolve-cache/... on the same origin, an LFS file through its 302 to
//                  the CDN.
//
// Transport, token, bounds and waits: hub_transport.h.
// Thread safety: one thread at a time.
#pragma once

#include <memory>

#include "core/hub/hub_api.h"
#include "core/hub/hub_transport.h"

namespace modelplane::core {

class HuggingFaceApi final : public HubApi {
 public:
  explicit HuggingFaceApi(std::unique_ptr<HubTransport> transport)
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
