// The administrator's signature policy (the `signatures` section of the source policy, so the
// operator and every node agent read the same rules from their config): which signers may vouch
// for which namespaces' revisions, and which namespaces must have every revision signed.
//
//   sourcePolicy:
//     signatures:
//       required: [team-a]                # namespaces whose revisions must carry a verified
//                                         # signature ("*": every namespace)
//       signers:
//         - name: release-key             # named in status.signedBy and in logs
//           publicKey: |                  # key mode: a PEM public key (EC P-256, P-384, P-521)
//             -----BEGIN PUBLIC KEY-----
//             ...
//           namespaces: [team-a]          # absent or ["*"]: every namespace
//         - name: corp-release
//           certificateAuthorities: |     # certificate mode: PEM roots the signing
//             -----BEGIN CERTIFICATE----- # certificate's chain must lead to
//             ...
//           identities: [release@corp.example, spiffe://corp.example/release]
//                                         # subjectAltNames (email, URI or DNS) accepted
//
// BindConfig checks every PEM when the config is read, so a broken key stops the binary at
// start rather than failing each revision later.
// Thread safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/config/config_map.h"

namespace modelplane::core {

struct SignerRule {
  std::string name;
  std::string public_key;               // PEM; set in key mode
  std::string certificate_authorities;  // PEM, one or more certificates; set in certificate mode
  std::vector<std::string> identities;  // certificate mode: at least one
  std::vector<std::string> namespaces;  // empty or "*": every namespace
};

struct SignaturePolicy {
  std::vector<std::string> required;
  std::vector<SignerRule> signers;
};

void BindConfig(ConfigMap& map, SignerRule& rule);
void BindConfig(ConfigMap& map, SignaturePolicy& policy);

// Whether revisions of `namespace_name` must carry a verified signature.
[[nodiscard]] bool RequiresSignature(const SignaturePolicy& policy,
                                     std::string_view namespace_name);
// Whether `rule` may vouch for revisions of `namespace_name`.
[[nodiscard]] bool SignerServes(const SignerRule& rule, std::string_view namespace_name);

}  // namespace modelplane::core
