#include "core/api/source_identity.h"

#include <algorithm>
#include <cctype>

#include "core/api/hub_source.h"

namespace modelplane::core::api {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view WithoutTrailingSlashes(std::string_view text) {
  while (text.size() > 1 && text.back() == '/') text.remove_suffix(1);
  return text;
}

// scheme://host[:port] of a URL; the whole text when it has no scheme.
std::string_view OriginOf(std::string_view url) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return WithoutTrailingSlashes(url);
  const std::size_t path_start = url.find_first_of("/?#", scheme_end + 3);
  return url.substr(0, path_start);
}

}  // namespace

std::string SourceIdentity(const ModelSource& source) {
  if (source.object_store) {
    const ObjectStoreLocation& location = *source.object_store;
    std::string endpoint = location.endpoint.empty()
                               ? "aws:" + Lower(location.region)
                               : Lower(WithoutTrailingSlashes(location.endpoint));
    return std::string(kTierObjectStore) + "/" + endpoint + "/" + location.bucket;
  }
  if (source.http) {
    return std::string(kTierHttp) + "/" + Lower(OriginOf(source.http->base_url));
  }
  if (HubLocationOf(source) != nullptr) {
    // One budget per hub, not per repository: a hub throttles a client across its repositories.
    return std::string(kTierHub) + "/" + Lower(HubEndpoint(source));
  }
  if (source.shared_filesystem) {
    return std::string(kTierSharedFilesystem) + "/" +
           std::string(WithoutTrailingSlashes(source.shared_filesystem->path));
  }
  return source.type + "/" + source.name;
}

bool IsSourceTier(std::string_view tier) {
  return tier == kTierObjectStore || tier == kTierHttp || tier == kTierHub ||
         tier == kTierSharedFilesystem;
}

std::string_view SourceIdentityTier(std::string_view identity) {
  const std::size_t slash = identity.find('/');
  if (slash == std::string_view::npos) return {};
  const std::string_view tier = identity.substr(0, slash);
  if (tier == kTierPeer) return kTierPeer;
  for (std::string_view known : {kTierObjectStore, kTierHttp, kTierHub, kTierSharedFilesystem}) {
    if (tier == known) return known;
  }
  return {};
}

}  // namespace modelplane::core::api
