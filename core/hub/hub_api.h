// What an import asks of a hub, the same for the Hugging Face Hub (hugging_face_api.h) and
// ModelScope (model_scope_api.h): resolve a revision to a commit once, list the commit's files,
// download one to hash it (and keep its bytes when asked).
//
// Both hubs go through hub_transport.h, which holds what they share: the token only on the
// endpoint's origin, bounded answers, waits on 429s, and failures as HubRefusals (hub_errors.h).
// Thread safety: one thread at a time per object.
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
#include "core/hub/hub_file.h"

namespace modelplane::core {

struct HubClientOptions {
  std::string endpoint;              // "https://huggingface.co" or a mirror, without a trailing '/'
  std::optional<std::string> token;  // unset: anonymous
  ClientOptions http;                // timeouts, TLS; its Retry-After waits are made here instead
  std::size_t max_json_bytes = 16 * 1024 * 1024;  // one JSON answer (a tree page, a listing)
  std::size_t max_tree_pages = 1000;
  std::size_t max_tree_files = 200'000;
  int max_throttle_waits = 3;  // per request
  std::chrono::seconds max_throttle_wait{120};
  // Told, in one sentence, what the client waits for (a rate limit); null: silent.
  std::function<void(std::string_view)> note;
};

struct HubFileContent {
  std::int64_t size = 0;
  std::string sha256;  // "sha256:<64 lower-case hex>"
  std::string bytes;   // the content, when asked to keep it
};

class HubApi {
 public:
  virtual ~HubApi() = default;

  // The commit (40 lower-case hex digits) `revision` (a branch, tag or commit) names now.
  [[nodiscard]] virtual Result<std::string> ResolveCommit(const std::string& repository,
                                                          const std::string& revision) = 0;

  // Every file of the commit.
  [[nodiscard]] virtual Result<std::vector<HubFile>> ListFiles(const std::string& repository,
                                                               const std::string& commit) = 0;

  // Downloads `file` at `commit` and hashes it, checked against the listing's size (and sha256
  // when it gives one); keeps the bytes when `keep_limit` is above 0 (HubAnswerTooLarge, before
  // any download, when the listed size is larger).
  [[nodiscard]] virtual Result<HubFileContent> ReadFile(const std::string& repository,
                                                        const std::string& commit,
                                                        const HubFile& file,
                                                        std::size_t keep_limit = 0) = 0;
};

// The API of the hub a source type names (core::api::kSourceHuggingFace or kSourceModelScope);
// kInvalidArgument for another type or an endpoint that is not an http(s) origin.
[[nodiscard]] Result<std::unique_ptr<HubApi>> CreateHubApi(std::string_view source_type,
                                                           HubClientOptions options,
                                                           const Clock& clock);

}  // namespace modelplane::core
