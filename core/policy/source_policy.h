// The administrator's source policy: which shared-filesystem roots, object-store endpoints and
// buckets, and HTTP origins a ModelRevision may name, from which namespaces, and which
// object-store credential Secrets a namespace may use. The operator checks it at admission and
// before it plans a revision; the node agent checks it again before it opens any source, so a
// revision that reached the API server around admission still reads nothing it may not.
//
// It is an allow-list: a source that no rule allows is refused, and an agent or operator run
// without a policy allows no revision source at all (peers still serve verified blobs). Both
// binaries read it from their config file under `sourcePolicy` (the chart renders the same
// values into both; see docs/security.md for why config and not a cluster object).
//
//   sourcePolicy:
//     credentialsNamespace: modelplane      # default secretNamespace of credentials rules
//     sharedFilesystems:
//       - root: /mnt/models                 # a revision's path must lie below it
//         namespaces: [team-a]              # absent or ["*"]: every namespace
//     objectStores:
//       - endpoint: https://minio.example:9000   # absent: AWS's regional endpoints
//         buckets: [models]                 # "*": any bucket at that endpoint
//         nodeCredentials: true             # may use the agent's own credentials
//     httpOrigins:
//       - url: https://huggingface.co/org/  # origin, and a path prefix at segment boundaries
//         addresses: [10.1.0.0/16]          # special-purpose ranges its name may resolve to
//     hubs:                                 # huggingFace and modelScope sources
//       - endpoint: https://huggingface.co  # the hub, or a mirror (HF_ENDPOINT)
//         repositories: ["meta-llama/*"]    # absent or ["*"]: every repository
//         redirectHosts: [cdn-lfs.hf.co, "*.xethub.hf.co"]  # where its resolve may redirect
//         addresses: [10.1.0.0/16]          # as httpOrigins, for the endpoint and those hosts
//     credentials:
//       - secret: models-readonly           # another namespace's Secret...
//         secretNamespace: shared-keys      # ...here (absent: credentialsNamespace)
//         namespaces: [team-a]              # ...that revisions in these namespaces may name
//     signatures:                           # who may sign which namespaces' revisions, and
//       required: [team-a]                  # which must be signed
//       (core/signing/signature_policy.h) signers: [...]
//
// A revision's credentialsSecretRef names a Secret in the revision's own namespace unless it
// says `namespace`; its own namespace's Secret is always allowed, another namespace's only when
// a credentials rule grants that Secret to the revision's namespace. The operator hands the
// Secret's keys to a node agent only for a revision its node holds and only as the grant below
// says (operator/credentials/credential_authorization.h).
// Object stores and HTTP origins are allowed by host name, and the agent resolves the name when
// it connects; it connects only to resolved addresses the rule allows (SourceGrant::addresses):
// every public address, and a special-purpose one (loopback, private, link-local, CGNAT,
// unique-local, ...) only inside the rule's `addresses` (CIDR, IPv4 or IPv6) or when the rule
// names the host as that IP literal. So a DNS answer cannot point an allowed name at the node
// or its network; a refusal fails the source with SourceAddressDenied.
// Thread safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_revision.h"
#include "core/config/config_map.h"
#include "core/error/error.h"
#include "core/http/address_policy.h"
#include "core/signing/signature_policy.h"

namespace modelplane::core {

struct SharedFilesystemRule {
  std::string root;
  std::vector<std::string> namespaces;
};

struct ObjectStoreRule {
  std::string endpoint;  // empty: AWS's own endpoints
  std::vector<std::string> buckets;
  std::vector<std::string> namespaces;
  bool node_credentials = false;
  // Special-purpose address ranges (CIDR) the endpoint may resolve to; see SourceGrant.
  std::vector<std::string> addresses;
};

struct HttpOriginRule {
  std::string url;
  std::vector<std::string> namespaces;
  std::vector<std::string> addresses;  // as ObjectStoreRule::addresses
};

// A hub's redirects are followed only to the endpoint's own origin and to `redirect_hosts`
// (exact names, or "*.domain" for any name below it); the Authorization header goes only to the
// endpoint's own origin (node-agent/sources/hub_range_source.h).
struct HubRule {
  std::string endpoint;
  std::vector<std::string> repositories;  // "org/name", "org/*" or "*"
  std::vector<std::string> redirect_hosts;
  std::vector<std::string> namespaces;
  std::vector<std::string> addresses;  // as ObjectStoreRule::addresses
};

struct CredentialRule {
  std::string secret;
  std::string secret_namespace;  // empty: SourcePolicy::credentials_namespace
  std::vector<std::string> namespaces;
};

struct SourcePolicy {
  std::string credentials_namespace;
  std::vector<SharedFilesystemRule> shared_filesystems;
  std::vector<ObjectStoreRule> object_stores;
  std::vector<HttpOriginRule> http_origins;
  std::vector<HubRule> hubs;
  std::vector<CredentialRule> credentials;
  SignaturePolicy signatures;
};

void BindConfig(ConfigMap& map, SharedFilesystemRule& rule);
void BindConfig(ConfigMap& map, ObjectStoreRule& rule);
void BindConfig(ConfigMap& map, HttpOriginRule& rule);
void BindConfig(ConfigMap& map, HubRule& rule);
void BindConfig(ConfigMap& map, CredentialRule& rule);
void BindConfig(ConfigMap& map, SourcePolicy& policy);

// What the policy lets the agent do for one source, in the order of the revision's sources.
struct SourceGrant {
  // sharedFilesystem: the policy root the source's files are opened beneath (openat2
  // RESOLVE_BENEATH), so a symlink on the share cannot lead out of what the admin allowed.
  std::string confine_root;
  // objectStore without credentialsSecretRef: the agent's own credentials may be used.
  bool node_credentials = false;
  // objectStore and http: the addresses the agent may connect to for the source. Special-purpose
  // ones (loopback, private, link-local with the metadata service, ...; address_policy.h) only
  // inside the matching rule's `addresses`, or the rule's own host when the administrator wrote
  // it as an IP literal. Unset: any address (the command-line tools; never from AuthorizeSources).
  std::optional<AddressPolicy> addresses;
  // huggingFace and modelScope: the hosts (besides the endpoint's own) a redirect may lead to,
  // as HubRule::redirect_hosts, lower-cased.
  std::vector<std::string> redirect_hosts;
  // objectStore, huggingFace and modelScope with credentialsSecretRef: the namespace of the Secret
  // the reference may use (the revision's own, or the one a credentials rule grants).
  std::string secret_namespace;
};

// Whether `host` (lower-case) is one of `patterns` (exact names, or "*.domain": any DNS name
// below the domain, not the domain itself, and never an IP address).
[[nodiscard]] bool HostMatches(std::string_view host, const std::vector<std::string>& patterns);

// Every source checked; kPermissionDenied listing each source that breaks the policy and the
// rule list it found no match in. `policy` null: no policy configured, every source refused.
[[nodiscard]] Result<std::vector<SourceGrant>> AuthorizeSources(
    const SourcePolicy* policy, std::string_view namespace_name,
    const std::vector<api::ModelSource>& sources);

}  // namespace modelplane::core
