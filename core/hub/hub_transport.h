// What the hub APIs (hugging_face_api.h, model_scope_api.h) do alike, so each of them only
// builds URLs and reads answers:
//
// - The token goes to the endpoint's origin (scheme, host and port) only, as
//   "Authorization: Bearer" (and, for ModelScope, its session cookie too, as its client sends
//   it), never to a CDN or another host: core/http/redirect_follower.h drops both headers on
//   the first hop that leaves, and a URL off the origin never gets them. It is never part of an
//   error message.
// - JSON answers follow redirects on the endpoint's origin only and are bounded by
//   max_json_bytes. A file streams through SHA-256 and is checked against the listing's size
//   (and sha256 when it gives one); a plain file may follow redirects on the origin only, an LFS
//   file its redirect to the CDN.
// - A 429 (or 503) that says how long to wait (Retry-After) is waited out on the injected
//   clock, that long plus a second as huggingface_hub does, at most max_throttle_waits times per
//   request and never longer than max_throttle_wait at once; then HubThrottled.
// - Failures are HubRefusals (hub_failure.h maps each hub's answers).
// Thread safety: one thread at a time (the waits and the note callback are not synchronised).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/http/http_client.h"
#include "core/http/url.h"
#include "core/hub/hub_api.h"
#include "core/hub/hub_failure.h"

namespace modelplane::core {

class HubTransport {
 public:
  // kInvalidArgument when the endpoint is not an http(s) URL without a path, or the token
  // holds a line break.
  [[nodiscard]] static Result<std::unique_ptr<HubTransport>> Create(HubClientOptions options,
                                                                    HubDialect dialect,
                                                                    const Clock& clock);
  HubTransport(const HubTransport&) = delete;
  HubTransport& operator=(const HubTransport&) = delete;
  ~HubTransport();

  [[nodiscard]] const HubClientOptions& options() const { return options_; }
  [[nodiscard]] const std::string& endpoint() const { return options_.endpoint; }

  // What a failure of this request is about, for the refusal the user reads.
  [[nodiscard]] HubCallContext Context(HubCall call, const std::string& repository,
                                       const std::string& revision,
                                       const std::string& path = "") const;

  // Ok when `url` is on the endpoint's origin; HubUnexpectedRedirect naming `what` otherwise.
  [[nodiscard]] Status RequireHome(const Url& url, std::string_view what) const;

  // A GET of `url` with a body of at most max_json_bytes.
  [[nodiscard]] Result<ClientResponse> FetchJson(const std::string& url,
                                                 const HubCallContext& context);

  // The file at `url`, hashed; see HubApi::ReadFile.
  [[nodiscard]] Result<HubFileContent> ReadFile(const std::string& url, const HubFile& file,
                                                std::size_t keep_limit,
                                                const HubCallContext& context);

 private:
  HubTransport(HubClientOptions options, HubDialect dialect, std::unique_ptr<HttpClient> http,
               std::string origin, const Clock& clock);
  // A GET of `url`, with the token when the URL is on the endpoint's origin.
  [[nodiscard]] ClientRequest RequestFor(const std::string& url) const;
  // Runs `attempt` again after each throttling answer the rules allow; maps its last failure.
  template <typename Value>
  [[nodiscard]] Result<Value> WithThrottleWaits(const std::function<Result<Value>()>& attempt,
                                                const HubCallContext& context);

  const HubClientOptions options_;
  const HubDialect dialect_;
  const std::unique_ptr<HttpClient> http_;
  const std::string origin_;  // the endpoint's, lower-case: where the token may go
  const Clock& clock_;
};

}  // namespace modelplane::core
