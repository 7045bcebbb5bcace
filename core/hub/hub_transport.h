// The part of the Hugging Face Hub's API an import needs, against the Hub or a mirror that
// follows the HF_ENDPOINT convention (the same paths under another base URL):
//
//   ResolveCommit  GET /api/models/{repo}/revision/{rev}: a branch, tag or commit to the
//                  commit every later request names, so a branch that moves mid-import moves
//                  nothing;
//   ListFiles      GET /api/models/{repo}/tree/{commit}?recursive=true, following each page's
//                  Link rel="next" (absolute, on the endpoint's origin);
//   ReadFile       GET /{repo}/resolve/{commit}/{path}, streamed through SHA-256 and checked
//                  against the listing's size (and for LFS files its sha256). A plain git file
//                  may follow redirects on the endpoint's origin only (the Hub's 307 to
//                  /api/resolve-cache/...); an LFS file may follow its redirect to the CDN.
//
// The token goes as "Authorization: Bearer" to the endpoint's origin (scheme, host and port)
// only, never to a CDN or another host (core/http/redirect_follower.h drops it on the first hop
// that leaves), and is never part of an error message.
//
// Every answer is bounded: JSON bodies and tree pages by max_json_bytes, the listing by
// max_tree_pages and max_tree_files, a file by its listed size (a kept copy by keep_limit).
// Failures are HubRefusals (hub_errors.h, hub_failure.h). A 429 (or 503) that says how long to
// wait (Retry-After) is waited out, that long plus a second as huggingface_hub does, at most
// max_throttle_waits times and never longer than max_throttle_wait at once; then HubThrottled.
// Thread safety: one thread at a time (the waits and the note callback are not synchronised).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/http/http_client.h"
#include "core/hub/hub_failure.h"
#include "core/hub/hub_tree_page.h"

namespace modelplane::core {

struct HubClientOptions {
  std::string endpoint;              // "https://huggingface.co" or a mirror, without a trailing '/'
  std::optional<std::string> token;  // unset: anonymous
  ClientOptions http;                // timeouts, TLS; its Retry-After waits are made here instead
  std::size_t max_json_bytes = 16 * 1024 * 1024;
  std::size_t max_tree_pages = 1000;
  std::size_t max_tree_files = 200'000;
  int max_throttle_waits = 3;
  std::chrono::seconds max_throttle_wait{120};
  // Told, in one sentence, what the client waits for (a rate limit); null: silent.
  std::function<void(std::string_view)> note;
};

struct HubFileContent {
  std::int64_t size = 0;
  std::string sha256;  // "sha256:<64 lower-case hex>"
  std::string bytes;   // the content, when asked to keep it
};

class HubApiClient {
 public:
  [[nodiscard]] static Result<std::unique_ptr<HubApiClient>> Create(HubClientOptions options,
                                                                    const Clock& clock);
  HubApiClient(const HubApiClient&) = delete;
  HubApiClient& operator=(const HubApiClient&) = delete;
  ~HubApiClient();

  // The commit (40 lower-case hex digits) `revision` names now.
  [[nodiscard]] Result<std::string> ResolveCommit(const std::string& repository,
                                                  const std::string& revision);

  // Every file of the commit, in the listing's order.
  [[nodiscard]] Result<std::vector<HubFile>> ListFiles(const std::string& repository,
                                                       const std::string& commit);

  // Downloads `file` at `commit` and hashes it; keeps the bytes when `keep_limit` is above 0
  // (HubAnswerTooLarge, before any download, when the listed size is larger).
  [[nodiscard]] Result<HubFileContent> ReadFile(const std::string& repository,
                                                const std::string& commit, const HubFile& file,
                                                std::size_t keep_limit = 0);

 private:
  HubApiClient(HubClientOptions options, std::unique_ptr<HttpClient> http, std::string origin,
               const Clock& clock);
  // A GET of `url` with the token when the URL is on the endpoint's origin.
  [[nodiscard]] ClientRequest RequestFor(const std::string& url) const;
  [[nodiscard]] HubCallContext Context(HubCall call, const std::string& repository,
                                       const std::string& revision,
                                       const std::string& path = "") const;
  // Runs `attempt` again after each throttling answer the rules allow; maps its last failure.
  template <typename Value>
  [[nodiscard]] Result<Value> WithThrottleWaits(const std::function<Result<Value>()>& attempt,
                                                const HubCallContext& context);
  [[nodiscard]] Result<ClientResponse> FetchJson(const std::string& url,
                                                 const HubCallContext& context);

  const HubClientOptions options_;
  const std::unique_ptr<HttpClient> http_;
  const std::string origin_;  // the endpoint's, lower-case: where the token may go
  const Clock& clock_;
};

}  // namespace modelplane::core
