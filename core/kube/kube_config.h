// Where the Kubernetes API server is and how to authenticate to it: from a kubeconfig file
// (what kubectl uses) or from the pod's service account (in-cluster).
//
// Certificates and keys are held as PEM text so the TLS layer never re-reads files; the
// service-account token is the exception: it rotates, so it is re-read through TokenSource.
// Thread safety: KubeConfig is a value; TokenSource is safe to call from many threads.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "core/clock/clock.h"
#include "core/error/error.h"

namespace modelplane::core {

// A bearer token that is either fixed or read from a file that the kubelet rotates.
class TokenSource {
 public:
  TokenSource() = default;
  static TokenSource Fixed(std::string token);
  // Re-reads the file at most once per `refresh` (client-go uses one minute).
  static TokenSource FromFile(std::string path, const Clock& clock,
                              std::chrono::seconds refresh = std::chrono::seconds(60));

  TokenSource(const TokenSource& other);
  TokenSource& operator=(const TokenSource& other);

  // The current token; empty when the config has no token. Fails if the file cannot be read.
  [[nodiscard]] Result<std::string> Token() const;
  [[nodiscard]] bool empty() const { return token_.empty() && path_.empty(); }

 private:
  std::string path_;
  const Clock* clock_ = nullptr;
  std::chrono::seconds refresh_{60};
  mutable std::mutex mutex_;
  mutable std::string token_;
  mutable std::optional<Clock::SteadyTime> read_at_;
};

struct KubeConfig {
  std::string server;                     // https://host:port, no trailing slash
  std::string certificate_authority_pem;  // empty: system trust store
  std::string client_certificate_pem;
  std::string client_key_pem;
  TokenSource token;
  std::string tls_server_name;  // overrides the name checked in the server certificate
  bool insecure_skip_tls_verify = false;
  std::string default_namespace = "default";
};

// Reads a kubeconfig file. `context` empty means its current-context. Relative file paths in
// it are relative to the file's folder, as kubectl resolves them.
[[nodiscard]] Result<KubeConfig> LoadKubeconfigFile(const std::string& path,
                                                    const std::string& context = "");
[[nodiscard]] Result<KubeConfig> LoadKubeconfigString(const std::string& yaml,
                                                      const std::string& base_directory,
                                                      const std::string& context = "");

// The service account's view: KUBERNETES_SERVICE_HOST/PORT from `getenv`, token, CA and
// namespace from `account_directory` (normally /var/run/secrets/kubernetes.io/serviceaccount).
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string&)>;
[[nodiscard]] Result<KubeConfig> LoadInClusterConfig(
    const EnvironmentLookup& getenv, const Clock& clock,
    const std::string& account_directory = "/var/run/secrets/kubernetes.io/serviceaccount");

// The process environment, for production callers of LoadInClusterConfig.
[[nodiscard]] std::optional<std::string> ProcessEnvironment(const std::string& name);

}  // namespace modelplane::core
