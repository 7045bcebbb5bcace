#include "core/kube/kube_config.h"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/io/bounded_file.h"
#include "core/text/base64.h"

namespace modelplane::core {
namespace {

// Kubeconfigs are small; anything bigger is not one.
constexpr std::size_t kMaxFileBytes = 4 << 20;

std::string Resolve(const std::string& base_directory, const std::string& path) {
  if (path.empty() || path.front() == '/' || base_directory.empty()) return path;
  return (std::filesystem::path(base_directory) / path).string();
}

// Returns the "<kind>" entry named `name` from a list of {name, <kind>: {...}}.
Result<YAML::Node> FindNamed(const YAML::Node& root, const std::string& list,
                             const std::string& kind, const std::string& name) {
  const YAML::Node entries = root[list];
  if (entries && entries.IsSequence()) {
    for (const auto& entry : entries) {
      if (entry["name"] && entry["name"].as<std::string>() == name) {
        if (!entry[kind] || !entry[kind].IsMap()) {
          return MakeError(ErrorCode::kInvalidArgument,
                           fmt::format("{} entry '{}' has no '{}' map", list, name, kind));
        }
        return entry[kind];
      }
    }
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   "kubeconfig has no " + kind + " named '" + name + "' in " + list);
}

std::string Text(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  return value && value.IsScalar() ? value.as<std::string>() : std::string();
}

// Reads `<key>-data` (base64) or `<key>` (a file path) into PEM text.
Result<std::string> PemFrom(const YAML::Node& map, const std::string& key,
                            const std::string& base_directory) {
  const std::string data = Text(map, (key + "-data").c_str());
  if (!data.empty()) return DecodeBase64(data, key + "-data");
  const std::string path = Text(map, key.c_str());
  if (path.empty()) return std::string();
  return ReadBoundedFile(Resolve(base_directory, path), kMaxFileBytes);
}

Result<KubeConfig> ParseKubeconfig(const YAML::Node& root, const std::string& base_directory,
                                   const std::string& wanted_context) {
  if (!root.IsMap()) return MakeError(ErrorCode::kInvalidArgument, "kubeconfig is not a map");
  const std::string context_name =
      wanted_context.empty() ? Text(root, "current-context") : wanted_context;
  if (context_name.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "kubeconfig has no current-context");
  }
  auto context = FindNamed(root, "contexts", "context", context_name);
  if (!context) return std::unexpected(context.error());
  auto cluster = FindNamed(root, "clusters", "cluster", Text(*context, "cluster"));
  if (!cluster) return std::unexpected(cluster.error());

  KubeConfig config;
  config.server = Text(*cluster, "server");
  while (config.server.ends_with('/')) config.server.pop_back();
  if (!config.server.starts_with("https://") && !config.server.starts_with("http://")) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "cluster server must be an http(s) URL, got '" + config.server + "'");
  }
  config.tls_server_name = Text(*cluster, "tls-server-name");
  config.insecure_skip_tls_verify = Text(*cluster, "insecure-skip-tls-verify") == "true";
  auto authority = PemFrom(*cluster, "certificate-authority", base_directory);
  if (!authority) return std::unexpected(authority.error());
  config.certificate_authority_pem = std::move(*authority);
  if (const std::string ns = Text(*context, "namespace"); !ns.empty()) {
    config.default_namespace = ns;
  }

  const std::string user_name = Text(*context, "user");
  if (!user_name.empty()) {
    auto user = FindNamed(root, "users", "user", user_name);
    if (!user) return std::unexpected(user.error());
    auto certificate = PemFrom(*user, "client-certificate", base_directory);
    if (!certificate) return std::unexpected(certificate.error());
    auto key = PemFrom(*user, "client-key", base_directory);
    if (!key) return std::unexpected(key.error());
    if (certificate->empty() != key->empty()) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          "user '" + user_name + "' has a client certificate without a key or the reverse");
    }
    config.client_certificate_pem = std::move(*certificate);
    config.client_key_pem = std::move(*key);
    if (const std::string token = Text(*user, "token"); !token.empty()) {
      config.token = TokenSource::Fixed(token);
    } else if (const std::string file = Text(*user, "tokenFile"); !file.empty()) {
      static const SystemClock kClock;  // immutable; token files in kubeconfigs rarely rotate
      config.token = TokenSource::FromFile(Resolve(base_directory, file), kClock);
    }
  }
  return config;
}

}  // namespace

TokenSource TokenSource::Fixed(std::string token) {
  TokenSource source;
  source.token_ = std::move(token);
  return source;
}

TokenSource TokenSource::FromFile(std::string path, const Clock& clock,
                                  std::chrono::seconds refresh) {
  TokenSource source;
  source.path_ = std::move(path);
  source.clock_ = &clock;
  source.refresh_ = refresh;
  return source;
}

TokenSource::TokenSource(const TokenSource& other) {
  *this = other;
}

TokenSource& TokenSource::operator=(const TokenSource& other) {
  if (this == &other) return *this;
  std::scoped_lock lock(mutex_, other.mutex_);
  path_ = other.path_;
  clock_ = other.clock_;
  refresh_ = other.refresh_;
  token_ = other.token_;
  read_at_ = other.read_at_;
  return *this;
}

Result<std::string> TokenSource::Token() const {
  std::lock_guard lock(mutex_);
  if (path_.empty()) return token_;
  const auto now = clock_->Now();
  if (read_at_ && now - *read_at_ < refresh_) return token_;
  auto content = ReadBoundedFile(path_, kMaxFileBytes);
  if (!content) {
    // Keep serving the last good token: a rotation in progress must not fail requests.
    if (!token_.empty()) return token_;
    return std::unexpected(content.error().Wrap("reading service-account token"));
  }
  while (!content->empty() && (content->back() == '\n' || content->back() == '\r')) {
    content->pop_back();
  }
  token_ = std::move(*content);
  read_at_ = now;
  return token_;
}

Result<KubeConfig> LoadKubeconfigString(const std::string& yaml, const std::string& base_directory,
                                        const std::string& context) {
  try {
    return ParseKubeconfig(YAML::Load(yaml), base_directory, context);
  } catch (const YAML::Exception& exception) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("kubeconfig is not valid YAML: ") + exception.what());
  }
}

Result<KubeConfig> LoadKubeconfigFile(const std::string& path, const std::string& context) {
  auto content = ReadBoundedFile(path, kMaxFileBytes);
  if (!content) return std::unexpected(content.error());
  auto config =
      LoadKubeconfigString(*content, std::filesystem::path(path).parent_path().string(), context);
  if (!config) return std::unexpected(config.error().Wrap(path));
  return config;
}

Result<KubeConfig> LoadInClusterConfig(const EnvironmentLookup& getenv, const Clock& clock,
                                       const std::string& account_directory) {
  const auto host = getenv("KUBERNETES_SERVICE_HOST");
  const auto port = getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !port || host->empty() || port->empty()) {
    return MakeError(ErrorCode::kNotFound,
                     "not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  KubeConfig config;
  // An IPv6 service address needs brackets in a URL.
  const bool ipv6 = host->find(':') != std::string::npos;
  config.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  auto authority = ReadBoundedFile(account_directory + "/ca.crt", kMaxFileBytes);
  if (!authority) return std::unexpected(authority.error());
  config.certificate_authority_pem = std::move(*authority);
  config.token = TokenSource::FromFile(account_directory + "/token", clock);
  if (auto token = config.token.Token(); !token) return std::unexpected(token.error());
  if (auto ns = ReadBoundedFile(account_directory + "/namespace", kMaxFileBytes);
      ns && !ns->empty()) {
    config.default_namespace = *ns;
    while (config.default_namespace.ends_with('\n')) config.default_namespace.pop_back();
  }
  return config;
}

std::optional<std::string> ProcessEnvironment(const std::string& name) {
  // Only read at start-up, before threads that could call setenv exist.
  const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace modelplane::core
