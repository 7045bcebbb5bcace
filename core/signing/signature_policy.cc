#include "core/signing/signature_policy.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/signing/signing_certificates.h"
#include "core/signing/signing_keys.h"

namespace modelplane::core {
namespace {

constexpr std::string_view kEveryNamespace = "*";
// Signer names appear in status.signedBy and in ModelRevocations: a Kubernetes name's length.
constexpr std::size_t kMaxSignerNameLength = 253;

bool ListsNamespace(const std::vector<std::string>& namespaces, std::string_view namespace_name) {
  return std::ranges::any_of(namespaces, [&](const std::string& listed) {
    return listed == kEveryNamespace || listed == namespace_name;
  });
}

}  // namespace

void BindConfig(ConfigMap& map, SignerRule& rule) {
  map.Required("name", rule.name);
  map.Optional("publicKey", rule.public_key);
  map.Optional("certificateAuthorities", rule.certificate_authorities);
  map.Optional("identities", rule.identities);
  map.Optional("namespaces", rule.namespaces);
  if (!map.ok()) return;
  if (rule.name.empty() || rule.name.size() > kMaxSignerNameLength) {
    return map.Fail(fmt::format("name must have 1 to {} characters", kMaxSignerNameLength));
  }
  const bool key_mode = !rule.public_key.empty();
  const bool certificate_mode = !rule.certificate_authorities.empty();
  if (key_mode == certificate_mode) {
    return map.Fail(
        fmt::format("signer \"{}\" must have exactly one of publicKey (key mode) and "
                    "certificateAuthorities (certificate mode)",
                    rule.name));
  }
  if (key_mode) {
    if (!rule.identities.empty()) {
      return map.Fail(
          fmt::format("signer \"{}\": identities apply to certificate mode only (a "
                      "publicKey signer is identified by its key)",
                      rule.name));
    }
    if (auto key = signing_internal::ReadSigningPublicKey(rule.public_key); !key) {
      return map.Fail(
          fmt::format("signer \"{}\": publicKey: {}", rule.name, key.error().message()));
    }
    return;
  }
  if (auto authorities = signing_internal::ReadCertificateAuthorities(rule.certificate_authorities);
      !authorities) {
    return map.Fail(fmt::format("signer \"{}\": certificateAuthorities {}", rule.name,
                                authorities.error().message()));
  }
  // Without identities, any certificate the authorities ever issued would vouch for models.
  if (rule.identities.empty()) {
    return map.Fail(
        fmt::format("signer \"{}\": identities must list the subjectAltNames "
                    "(email, URI or DNS) whose certificates may sign",
                    rule.name));
  }
  if (std::ranges::any_of(rule.identities, [](const std::string& i) { return i.empty(); })) {
    return map.Fail(fmt::format("signer \"{}\": identities must not be empty strings", rule.name));
  }
}

void BindConfig(ConfigMap& map, SignaturePolicy& policy) {
  map.Optional("required", policy.required);
  map.Optional("signers", policy.signers);
  if (!map.ok()) return;
  // status.signedBy names the signer; two of one name would make it ambiguous.
  std::set<std::string, std::less<>> names;
  for (const SignerRule& rule : policy.signers) {
    if (!names.insert(rule.name).second) {
      return map.Fail(fmt::format("signers: \"{}\" is named twice", rule.name));
    }
  }
}

bool RequiresSignature(const SignaturePolicy& policy, std::string_view namespace_name) {
  return ListsNamespace(policy.required, namespace_name);
}

bool SignerServes(const SignerRule& rule, std::string_view namespace_name) {
  return rule.namespaces.empty() || ListsNamespace(rule.namespaces, namespace_name);
}

}  // namespace modelplane::core
