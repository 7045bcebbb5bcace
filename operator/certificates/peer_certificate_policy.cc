#include "operator/certificates/peer_certificate_policy.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/api/peer_identity.h"
#include "core/json/json_lookup.h"
#include "core/text/base64.h"

namespace modelplane::controller {
namespace {

using Verdict = PeerCertificateDecision::Verdict;
using nlohmann::json;

constexpr std::chrono::seconds kMinimumLifetime{600};  // the API's own minimum

PeerCertificateDecision Deny(std::string reason, std::string message, std::string node = {}) {
  return {.verdict = Verdict::kDeny,
          .reason = std::move(reason),
          .message = std::move(message),
          .node_name = std::move(node)};
}

bool HasCondition(const json& request, std::string_view type) {
  const json* conditions = core::FindMember(request, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return false;
  return std::any_of(conditions->begin(), conditions->end(), [&](const json& condition) {
    return condition.is_object() && condition.value("type", "") == type;
  });
}

// The node a pod-bound token names: exactly one value of the extra, or empty.
std::string TokenNode(const json& request) {
  const json* extra = core::FindMember(request, {"spec", "extra"});
  if (extra == nullptr || !extra->is_object()) return {};
  const auto values = extra->find(std::string(core::api::kTokenNodeNameExtra));
  if (values == extra->end() || !values->is_array() || values->size() != 1 ||
      !(*values)[0].is_string()) {
    return {};
  }
  return (*values)[0].get<std::string>();
}

std::set<std::string> NodeAddresses(const json& node) {
  std::set<std::string> addresses;
  const json* listed = core::FindMember(node, {"status", "addresses"});
  if (listed == nullptr || !listed->is_array()) return addresses;
  for (const json& address : *listed) {
    if (address.is_object() && address.contains("address") && address["address"].is_string()) {
      addresses.insert(address["address"].get<std::string>());
    }
  }
  return addresses;
}

}  // namespace

core::Result<core::CertificateRequest> ReadCertificateRequest(const json& request) {
  const std::string encoded = core::StringMember(request, {"spec", "request"});
  auto pem = core::DecodeBase64(encoded, "spec.request");
  if (!pem) return std::unexpected(pem.error());
  return core::CertificateRequest::Parse(*pem);
}

PeerCertificateDecision DecidePeerCertificate(const json& request, const json* node,
                                              const PeerCertificatePolicy& policy) {
  if (core::StringMember(request, {"spec", "signerName"}) != core::api::kPeerSignerName) return {};
  if (!core::StringMember(request, {"status", "certificate"}).empty() ||
      HasCondition(request, "Denied") || HasCondition(request, "Failed")) {
    return {};
  }
  const std::string username = core::StringMember(request, {"spec", "username"});
  if (username != policy.agent_username) {
    return Deny("RequesterNotNodeAgent",
                fmt::format("requested by '{}', not by the node agent's ServiceAccount '{}'",
                            username, policy.agent_username));
  }
  const std::string node_name = TokenNode(request);
  if (node_name.empty()) {
    return Deny("TokenNotBoundToNode",
                "the requester's token is not bound to a pod on a node (use a projected "
                "ServiceAccount token, Kubernetes 1.30 or later)");
  }
  auto parsed = ReadCertificateRequest(request);
  if (!parsed) {
    return Deny("MalformedRequest", parsed.error().message(), node_name);
  }
  const std::string identity = core::api::PeerIdentityName(node_name);
  for (const std::string& dns : parsed->names().dns_names) {
    if (dns != identity) {
      return Deny("NameNotOfRequesterNode",
                  fmt::format("asks for DNS name '{}'; a node agent on {} may have only '{}'", dns,
                              node_name, identity),
                  node_name);
    }
  }
  const json* usages = core::FindMember(request, {"spec", "usages"});
  static const std::set<std::string> kAllowedUsages = {"digital signature", "key encipherment",
                                                       "server auth", "client auth"};
  if (usages != nullptr && usages->is_array()) {
    for (const json& usage : *usages) {
      if (!usage.is_string() || !kAllowedUsages.contains(usage.get<std::string>())) {
        return Deny("UsageNotAllowed",
                    fmt::format("asks for usage {}; only TLS server and client usages are signed",
                                usage.dump()),
                    node_name);
      }
    }
  }
  if (node == nullptr) {
    return {.verdict = Verdict::kNeedsNode, .node_name = node_name};
  }
  PeerCertificateDecision decision{.verdict = Verdict::kIssue, .node_name = node_name};
  decision.names.common_name = std::string(core::api::kPeerCommonName);
  decision.names.dns_names = {identity};
  const std::set<std::string> listed = NodeAddresses(*node);
  for (const std::string& address : parsed->names().ip_addresses) {
    (listed.contains(address) ? decision.names.ip_addresses : decision.left_out_addresses)
        .push_back(address);
  }
  decision.lifetime = policy.max_lifetime;
  if (const std::int64_t seconds = core::IntegerMember(request, {"spec", "expirationSeconds"});
      seconds > 0) {
    decision.lifetime =
        std::clamp(std::chrono::seconds(seconds), kMinimumLifetime, policy.max_lifetime);
  }
  decision.message =
      fmt::format("peer certificate for node {} signed by the modelplane operator", node_name);
  return decision;
}

}  // namespace modelplane::controller
