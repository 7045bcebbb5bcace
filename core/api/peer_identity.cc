#include "core/api/peer_identity.h"

#include <fmt/format.h>

#include "core/digest/sha256.h"

namespace modelplane::core::api {
namespace {

constexpr std::string_view kIdentitySuffix = ".peer.modelplane.invalid";

}  // namespace

std::string PeerIdentityName(std::string_view node_name) {
  return fmt::format("{}{}", node_name, kIdentitySuffix);
}

std::string NodeOfPeerIdentity(std::string_view name) {
  if (name.size() <= kIdentitySuffix.size() || !name.ends_with(kIdentitySuffix)) return {};
  return std::string(name.substr(0, name.size() - kIdentitySuffix.size()));
}

std::string PeerCertificateRequestName(std::string_view node_name,
                                       std::string_view key_fingerprint) {
  // Object names are DNS subdomains of at most 253 characters; node names may use them all, so
  // a long one is shortened and made unique again by a hash of the whole.
  std::string node = std::string(node_name);
  if (node.size() > 200) {
    node = fmt::format("{}-{}", node.substr(0, 180), Sha256HexOf(node_name).substr(0, 12));
  }
  std::string_view key = key_fingerprint;
  if (key.starts_with("sha256:")) key.remove_prefix(7);
  return fmt::format("modelplane-peer-{}-{}", node, key.substr(0, 16));
}

}  // namespace modelplane::core::api
