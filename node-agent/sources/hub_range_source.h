// RangeSource for a huggingFace or modelScope source (tier "hub"): each file is read with Range
// GETs of its resolve URL at the source's commit,
//
//   huggingFace  <endpoint>/<repository>/resolve/<commit>/<path>
//   modelScope   <endpoint>/api/v1/models/<repository>/repo?Revision=<commit>&FilePath=<path>
//
// which answers the bytes itself (small files, a mirror without a CDN) or redirects, a large
// file to a signed CDN URL. Redirects are followed only to the endpoint's own origin and to the
// hosts the source policy lists for the hub (SourceGrant::redirect_hosts); the token goes only
// to the endpoint's origin, never to a CDN (core/http/redirect_follower.h). Where a file's
// redirect led is reused for `redirect_ttl`, so later ranges of the file go straight there
// without asking the hub again (the hub rate-limits resolve calls), in a memory the agent's hub
// sources share (hub_redirect_memory.h, keyed by the credentials too); an answer of 401, 403,
// 404 or 410 from that URL (an expired signature) drops it and asks the hub again once.
//
// Errors, mapped for the fetch engine and the source's admission budget: 429 from the hub and
// 503 from its CDN are kThrottled (the budget cuts, as for S3's SlowDown); 404 and 410 are
// kNotFound, 401 kUnauthenticated (asked again once with a fresh token), 403 kPermissionDenied,
// a redirect the policy does not allow kPermissionDenied, other 5xx retryable kUnavailable.
// Thread safety: ReadRange may run on many threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock/clock.h"
#include "core/http/http_client.h"
#include "node-agent/fetch/range_source.h"
#include "node-agent/sources/hub_redirect_memory.h"

namespace modelplane::agent {

// The hub's token; `fresh`: the hub refused the last one (a rotated Secret).
using HubTokenProvider = std::function<core::Result<std::string>(bool fresh)>;

struct HubRangeSourceOptions {
  std::string name;  // the source's name in the revision
  std::string type;  // core::api::kSourceHuggingFace or kSourceModelScope
  std::string endpoint;
  std::string repository;
  std::string commit;
  // Host patterns a redirect may lead to besides the endpoint's origin (core::HostMatches).
  std::vector<std::string> redirect_hosts;
  std::size_t max_concurrency = 16;
  std::chrono::milliseconds read_timeout{30'000};
  HubTokenProvider token;  // null: no token (a public repository)
  // Who the token belongs to ("<secret namespace>/<name>", empty without one): part of the
  // redirect memory's key, so no source finds a URL another tenant's token obtained.
  std::string credential_scope;
  std::chrono::seconds redirect_ttl{600};
  std::shared_ptr<HubRedirectMemory> redirects;  // null: the source's own
  std::shared_ptr<const core::Clock> clock;      // null: the system clock
};

class HubRangeSource final : public RangeSource {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<HubRangeSource>> Create(
      std::shared_ptr<core::HttpClient> client, HubRangeSourceOptions options);

  [[nodiscard]] std::string_view tier() const override;
  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] std::size_t max_concurrency() const override { return options_.max_concurrency; }
  [[nodiscard]] core::Status ReadRange(const SourceFile& file, std::uint64_t offset,
                                       std::span<std::byte> destination,
                                       const ReadContext& context) override;

  // The resolve URL of `path` at the commit.
  [[nodiscard]] std::string ResolveUrl(std::string_view path) const;

 private:
  HubRangeSource(std::shared_ptr<core::HttpClient> client, HubRangeSourceOptions options,
                 std::string home_origin);
  [[nodiscard]] core::Status ReadOnce(const SourceFile& file, std::uint64_t offset,
                                      std::span<std::byte> destination, const ReadContext& context,
                                      const std::string& url, bool fresh_token);
  // The redirect memory's key for a file: the credentials and the resolve URL.
  [[nodiscard]] std::string MemoryKey(std::string_view path) const;

  std::shared_ptr<core::HttpClient> client_;
  HubRangeSourceOptions options_;
  const std::string name_;
  const std::string home_origin_;  // lower-case Url::Origin() of the endpoint
};

}  // namespace modelplane::agent
