#include "core/policy/source_policy.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/api/hub_source.h"
#include "core/api/source_location_rules.h"
#include "core/http/url.h"

namespace modelplane::core {
namespace {

constexpr std::string_view kAnyNamespace = "*";
constexpr std::string_view kAnyBucket = "*";

// "" when `path` is absolute with no empty, "." or ".." segments; else what is wrong. Lexical
// only: the agent confines the opens themselves beneath the root (openat2).
std::string CheckNormalAbsolutePath(std::string_view path) {
  if (path.empty() || path.front() != '/') return "must be an absolute path";
  if (path.find('\0') != std::string_view::npos) return "must not contain a NUL byte";
  if (path == "/") return "";
  if (path.back() == '/') return "must not end with '/'";
  std::size_t start = 1;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..") {
      return "must not contain empty, '.' or '..' segments";
    }
    start = end + 1;
  }
  return "";
}

bool IsBelow(std::string_view path, std::string_view root) {
  return path == root || (path.starts_with(root) && path[root.size()] == '/');
}

bool NamespaceAllowed(const std::vector<std::string>& namespaces, std::string_view namespace_name) {
  if (namespaces.empty()) return true;
  return std::ranges::any_of(namespaces, [&](const std::string& allowed) {
    return allowed == kAnyNamespace || allowed == namespace_name;
  });
}

// A Kubernetes object name (DNS-1123 subdomain): it becomes a path segment (the operator's
// credentials URL, a tool's secrets folder), so nothing in it may climb out.
bool IsSecretName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  auto alphanumeric = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alphanumeric(name.front()) || !alphanumeric(name.back())) return false;
  if (name.find("..") != std::string_view::npos) return false;
  return std::ranges::all_of(name, [&](char c) { return alphanumeric(c) || c == '-' || c == '.'; });
}

// A namespace name (DNS-1123 label).
bool IsNamespaceName(std::string_view name) {
  return name.size() <= 63 && name.find('.') == std::string_view::npos && IsSecretName(name);
}

std::string Lowercase(std::string text) {
  std::ranges::transform(text, text.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// An http(s) URL as the policy compares it: "scheme://host:port" in lower case, and the path.
struct Location {
  std::string origin;
  std::string path;
};

Result<Location> ParseLocation(std::string_view text) {
  auto url = Url::Parse(text);
  if (!url) return std::unexpected(url.error());
  if (url->target.find_first_of("?#") != std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("\"{}\" must not carry a query or fragment", text));
  }
  return Location{.origin = Lowercase(url->Origin()), .path = url->target};
}

// "" when a revision's URL path cannot climb out of a prefix once the server decodes it.
std::string CheckUrlPath(std::string_view path) {
  const std::string lowered = Lowercase(std::string(path));
  if (lowered.find("%2e") != std::string::npos || lowered.find("%2f") != std::string::npos ||
      lowered.find("%5c") != std::string::npos || lowered.find('\\') != std::string::npos) {
    return "must not carry encoded dots, slashes or backslashes";
  }
  std::size_t start = 1;
  while (start < path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, end - start);
    if (segment == "." || segment == "..") return "must not contain '.' or '..' segments";
    start = end + 1;
  }
  return "";
}

bool PathHasPrefix(std::string_view path, std::string_view prefix) {
  if (prefix.empty() || prefix == "/") return true;
  if (prefix.back() == '/') prefix.remove_suffix(1);
  return path == prefix || (path.starts_with(prefix) && path[prefix.size()] == '/');
}

// What a matched rule lets the agent connect to: its `addresses` (checked when the config was
// read), and the rule's host when the administrator wrote it as an IP literal, which names that
// address as explicitly as a /32 would.
AddressPolicy RuleAddresses(const std::vector<std::string>& addresses, std::string_view location) {
  AddressPolicy policy;
  for (const std::string& text : addresses) {
    if (auto range = AddressRange::Parse(text)) policy.allowed.push_back(*range);
  }
  if (auto url = Url::Parse(location); url && !location.empty()) {
    boost::system::error_code error;
    const auto literal = boost::asio::ip::make_address(url->host, error);
    if (!error) policy.allowed.push_back(AddressRange::Single(literal));
  }
  return policy;
}

class Authorizer {
 public:
  Authorizer(const SourcePolicy& policy, std::string_view namespace_name)
      : policy_(policy), namespace_(namespace_name) {}

  // "" and a grant when allowed, else the problem.
  std::string Check(const api::ModelSource& source, SourceGrant& grant) const {
    if (source.type == api::kSourceSharedFilesystem && source.shared_filesystem) {
      return CheckSharedFilesystem(source.shared_filesystem->path, grant);
    }
    if (source.type == api::kSourceObjectStore && source.object_store) {
      return CheckObjectStore(source, grant);
    }
    if (source.type == api::kSourceHttp && source.http) {
      return CheckHttp(source.http->base_url, grant);
    }
    if (const api::HubLocation* hub = api::HubLocationOf(source)) {
      return CheckHub(source, *hub, grant);
    }
    return fmt::format("type \"{}\" has no location the policy can check", source.type);
  }

 private:
  std::string CheckSharedFilesystem(const std::string& path, SourceGrant& grant) const {
    if (std::string problem = CheckNormalAbsolutePath(path); !problem.empty()) {
      return fmt::format("sharedFilesystem.path \"{}\" {}", path, problem);
    }
    for (const SharedFilesystemRule& rule : policy_.shared_filesystems) {
      if (NamespaceAllowed(rule.namespaces, namespace_) && IsBelow(path, rule.root)) {
        grant.confine_root = rule.root;
        return "";
      }
    }
    return fmt::format(
        "sharedFilesystem.path \"{}\" is below no sharedFilesystems root that namespace \"{}\" "
        "may use",
        path, namespace_);
  }

  std::string CheckObjectStore(const api::ModelSource& source, SourceGrant& grant) const {
    const api::ObjectStoreLocation& location = *source.object_store;
    std::string endpoint_origin;
    if (!location.endpoint.empty()) {
      auto parsed = ParseLocation(location.endpoint);
      if (!parsed) return fmt::format("objectStore.endpoint: {}", parsed.error().message());
      if (parsed->path != "/") {
        return fmt::format("objectStore.endpoint \"{}\" must not carry a path", location.endpoint);
      }
      endpoint_origin = parsed->origin;
    }
    const ObjectStoreRule* matched = nullptr;
    for (const ObjectStoreRule& rule : policy_.object_stores) {
      if (!NamespaceAllowed(rule.namespaces, namespace_)) continue;
      if (rule.endpoint.empty() != endpoint_origin.empty()) continue;
      if (!rule.endpoint.empty()) {
        auto allowed = ParseLocation(rule.endpoint);
        if (!allowed || allowed->origin != endpoint_origin) continue;
      }
      if (std::ranges::any_of(rule.buckets, [&](const std::string& bucket) {
            return bucket == kAnyBucket || bucket == location.bucket;
          })) {
        matched = &rule;
        grant.addresses = RuleAddresses(rule.addresses, rule.endpoint);
        break;
      }
    }
    const std::string described =
        location.endpoint.empty() ? std::string("AWS's endpoint") : location.endpoint;
    if (matched == nullptr) {
      return fmt::format(
          "objectStore bucket \"{}\" at {} matches no objectStores rule for namespace \"{}\"",
          location.bucket, described, namespace_);
    }
    if (source.credentials_secret_ref) return CheckSecret(*source.credentials_secret_ref, grant);
    if (!matched->node_credentials) {
      return fmt::format(
          "objectStore at {} has no credentialsSecretRef, and its objectStores rule does not "
          "let revisions use the agent's own credentials (nodeCredentials)",
          described);
    }
    grant.node_credentials = true;
    return "";
  }

  std::string CheckSecret(const api::SecretReference& ref, SourceGrant& grant) const {
    if (!IsSecretName(ref.name)) {
      return fmt::format("credentialsSecretRef \"{}\" is not a Secret name", ref.name);
    }
    const std::string& secret_namespace =
        ref.namespace_name.empty() ? namespace_ : ref.namespace_name;
    if (!IsNamespaceName(secret_namespace)) {
      return fmt::format("credentialsSecretRef namespace \"{}\" is not a namespace name",
                         secret_namespace);
    }
    // Its own namespace's Secret: whoever may create the revision there may create the Secret.
    bool allowed = secret_namespace == namespace_;
    for (const CredentialRule& rule : policy_.credentials) {
      const std::string& rule_namespace =
          rule.secret_namespace.empty() ? policy_.credentials_namespace : rule.secret_namespace;
      allowed = allowed || (rule.secret == ref.name && rule_namespace == secret_namespace &&
                            NamespaceAllowed(rule.namespaces, namespace_));
    }
    if (!allowed) {
      return fmt::format(
          "credentialsSecretRef \"{}/{}\" is another namespace's Secret, granted to namespace "
          "\"{}\" by no credentials rule",
          secret_namespace, ref.name, namespace_);
    }
    grant.secret_namespace = secret_namespace;
    return "";
  }

  std::string CheckHttp(const std::string& base_url, SourceGrant& grant) const {
    auto parsed = ParseLocation(base_url);
    if (!parsed) return fmt::format("http.baseUrl: {}", parsed.error().message());
    if (std::string problem = CheckUrlPath(parsed->path); !problem.empty()) {
      return fmt::format("http.baseUrl \"{}\" {}", base_url, problem);
    }
    for (const HttpOriginRule& rule : policy_.http_origins) {
      if (!NamespaceAllowed(rule.namespaces, namespace_)) continue;
      auto allowed = ParseLocation(rule.url);
      if (allowed && allowed->origin == parsed->origin &&
          PathHasPrefix(parsed->path, allowed->path)) {
        grant.addresses = RuleAddresses(rule.addresses, rule.url);
        return "";
      }
    }
    return fmt::format("http.baseUrl \"{}\" matches no httpOrigins rule for namespace \"{}\"",
                       base_url, namespace_);
  }

  std::string CheckHub(const api::ModelSource& source, const api::HubLocation& hub,
                       SourceGrant& grant) const {
    const std::string endpoint = api::HubEndpoint(source);
    auto parsed = ParseLocation(endpoint);
    if (!parsed) return fmt::format("{}.endpoint: {}", source.type, parsed.error().message());
    for (const HubRule& rule : policy_.hubs) {
      if (!NamespaceAllowed(rule.namespaces, namespace_)) continue;
      auto allowed = ParseLocation(rule.endpoint);
      if (!allowed || allowed->origin != parsed->origin) continue;
      if (!RepositoryAllowed(rule.repositories, hub.repository)) continue;
      grant.addresses = RuleAddresses(rule.addresses, rule.endpoint);
      for (const std::string& host : rule.redirect_hosts) {
        grant.redirect_hosts.push_back(Lowercase(host));
      }
      if (source.credentials_secret_ref) return CheckSecret(*source.credentials_secret_ref, grant);
      return "";
    }
    return fmt::format("{} repository \"{}\" at {} matches no hubs rule for namespace \"{}\"",
                       source.type, hub.repository, endpoint, namespace_);
  }

  static bool RepositoryAllowed(const std::vector<std::string>& patterns,
                                std::string_view repository) {
    if (patterns.empty()) return true;
    return std::ranges::any_of(patterns, [&](const std::string& pattern) {
      if (pattern == "*") return true;
      if (pattern.ends_with("/*")) {
        const std::string_view org = std::string_view(pattern).substr(0, pattern.size() - 1);
        return repository.starts_with(org) && repository.size() > org.size();
      }
      return pattern == repository;
    });
  }

  const SourcePolicy& policy_;
  const std::string namespace_;
};

void BindNamespaces(ConfigMap& map, std::vector<std::string>& namespaces) {
  map.Optional("namespaces", namespaces);
}

// Binds a rule's `addresses` and refuses any entry that is not a CIDR range, naming it.
void BindAddresses(ConfigMap& map, std::vector<std::string>& addresses) {
  map.Optional("addresses", addresses);
  if (!map.ok()) return;
  for (std::size_t index = 0; index < addresses.size(); ++index) {
    if (auto range = AddressRange::Parse(addresses[index]); !range) {
      map.Fail(fmt::format("addresses[{}]: {}", index, range.error().message()));
      return;
    }
  }
}

}  // namespace

void BindConfig(ConfigMap& map, SharedFilesystemRule& rule) {
  map.Required("root", rule.root);
  BindNamespaces(map, rule.namespaces);
  if (!map.ok()) return;
  if (std::string problem = CheckNormalAbsolutePath(rule.root); !problem.empty()) {
    map.Fail(fmt::format("root \"{}\" {}", rule.root, problem));
  } else if (rule.root == "/") {
    map.Fail("root \"/\" would let revisions read the whole node; name the share's folder");
  }
}

void BindConfig(ConfigMap& map, ObjectStoreRule& rule) {
  map.Optional("endpoint", rule.endpoint);
  map.Required("buckets", rule.buckets);
  BindNamespaces(map, rule.namespaces);
  map.Optional("nodeCredentials", rule.node_credentials);
  BindAddresses(map, rule.addresses);
  if (!map.ok()) return;
  if (rule.buckets.empty()) map.Fail("buckets must name at least one bucket (or \"*\")");
  if (!rule.endpoint.empty()) {
    auto parsed = ParseLocation(rule.endpoint);
    if (!parsed) {
      map.Fail(fmt::format("endpoint: {}", parsed.error().message()));
    } else if (parsed->path != "/") {
      map.Fail(fmt::format("endpoint \"{}\" must not carry a path", rule.endpoint));
    }
  }
}

void BindConfig(ConfigMap& map, HttpOriginRule& rule) {
  map.Required("url", rule.url);
  BindNamespaces(map, rule.namespaces);
  BindAddresses(map, rule.addresses);
  if (!map.ok()) return;
  auto parsed = ParseLocation(rule.url);
  if (!parsed) {
    map.Fail(fmt::format("url: {}", parsed.error().message()));
  } else if (std::string problem = CheckUrlPath(parsed->path); !problem.empty()) {
    map.Fail(fmt::format("url \"{}\" {}", rule.url, problem));
  }
}

void BindConfig(ConfigMap& map, HubRule& rule) {
  map.Required("endpoint", rule.endpoint);
  map.Optional("repositories", rule.repositories);
  map.Optional("redirectHosts", rule.redirect_hosts);
  BindNamespaces(map, rule.namespaces);
  BindAddresses(map, rule.addresses);
  if (!map.ok()) return;
  if (std::string problem = api::CheckEndpointUrl(rule.endpoint); !problem.empty()) {
    map.Fail(fmt::format("endpoint \"{}\" {}", rule.endpoint, problem));
    return;
  }
  for (const std::string& host : rule.redirect_hosts) {
    const std::string_view name = host.starts_with("*.") ? std::string_view(host).substr(2) : host;
    const std::string url = fmt::format("https://{}", name);
    if (std::string problem = api::CheckEndpointUrl(url);
        !problem.empty() || name.empty() || name.find(':') != std::string::npos) {
      map.Fail(fmt::format("redirectHosts entry \"{}\" must be a host name or \"*.domain\"", host));
      return;
    }
  }
}

void BindConfig(ConfigMap& map, CredentialRule& rule) {
  map.Required("secret", rule.secret);
  map.Optional("secretNamespace", rule.secret_namespace);
  BindNamespaces(map, rule.namespaces);
  if (map.ok() && !IsSecretName(rule.secret)) {
    map.Fail(fmt::format("secret \"{}\" is not a Secret name", rule.secret));
  }
  if (map.ok() && !rule.secret_namespace.empty() && !IsNamespaceName(rule.secret_namespace)) {
    map.Fail(fmt::format("secretNamespace \"{}\" is not a namespace name", rule.secret_namespace));
  }
}

void BindConfig(ConfigMap& map, SourcePolicy& policy) {
  map.Optional("credentialsNamespace", policy.credentials_namespace);
  map.Optional("sharedFilesystems", policy.shared_filesystems);
  map.Optional("objectStores", policy.object_stores);
  map.Optional("httpOrigins", policy.http_origins);
  map.Optional("hubs", policy.hubs);
  map.Optional("credentials", policy.credentials);
  map.Optional("signatures", policy.signatures);
  if (!map.ok()) return;
  for (const CredentialRule& rule : policy.credentials) {
    if (rule.secret_namespace.empty() && policy.credentials_namespace.empty()) {
      map.Fail(
          fmt::format("credentials rule for secret \"{}\" names no secretNamespace and there is no "
                      "credentialsNamespace",
                      rule.secret));
      return;
    }
  }
}

bool HostMatches(std::string_view host, const std::vector<std::string>& patterns) {
  boost::system::error_code not_an_address;
  (void)boost::asio::ip::make_address(host, not_an_address);
  const bool address_literal = !not_an_address;
  return std::ranges::any_of(patterns, [&](const std::string& pattern) {
    if (pattern.starts_with("*.")) {
      if (address_literal) return false;  // "*.0.0.2" names no domain
      const std::string_view domain = std::string_view(pattern).substr(1);  // ".domain"
      return host.size() > domain.size() && host.ends_with(domain);
    }
    return host == pattern;
  });
}

Result<std::vector<SourceGrant>> AuthorizeSources(const SourcePolicy* policy,
                                                  std::string_view namespace_name,
                                                  const std::vector<api::ModelSource>& sources) {
  if (policy == nullptr && !sources.empty()) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "no source policy is configured (sourcePolicy), so no revision source may "
                     "be read; see docs/security.md");
  }
  std::vector<SourceGrant> grants(sources.size());
  std::vector<std::string> problems;
  if (policy != nullptr) {
    const Authorizer authorizer(*policy, namespace_name);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (std::string problem = authorizer.Check(sources[i], grants[i]); !problem.empty()) {
        problems.push_back(fmt::format("source \"{}\": {}", sources[i].name, problem));
      }
    }
  }
  if (!problems.empty()) {
    return MakeError(ErrorCode::kPermissionDenied,
                     fmt::format("the source policy refuses it: {}", fmt::join(problems, "; ")));
  }
  return grants;
}

}  // namespace modelplane::core
