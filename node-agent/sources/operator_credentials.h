// The node agent's side of the operator's credentials endpoint (operator/credentials/): the
// keys of a Secret that a revision this node holds names in credentialsSecretRef.
//
// Each request carries the agent's projected ServiceAccount token (audience modelplane-operator,
// bound to its pod, so to its node), read from its file on every request since kubelet rotates
// it, over TLS verified against the operator's CA. Answers are kept in memory only, for `ttl`;
// a `fresh` read (the store refused the keys) asks again unless the last answer is younger than
// `min_refresh`, so many ranges refused at once make one request. Errors keep the HTTP mapping
// (core/http/http_status_error.h): 403 (the operator refuses this node the Secret) is
// kPermissionDenied and terminal, 404 kNotFound, 503 and transport errors retryable. Nothing of
// a Secret's value is logged or put in an error message.
// Thread safety: Read may be called from many threads at once.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/http/http_client.h"
#include "core/log/logger.h"
#include "node-agent/sources/credential_secrets.h"

namespace modelplane::agent {

inline constexpr std::string_view kCredentialsPathPrefix = "/credentials/v1/";

struct OperatorCredentialsOptions {
  std::string url;         // https://host:port of the operator
  std::string token_file;  // the projected ServiceAccount token
  std::string ca_file;     // the CA that signed the operator's certificate
  std::chrono::seconds ttl{300};
  std::chrono::seconds min_refresh{10};
  std::chrono::milliseconds timeout{10'000};
  std::shared_ptr<const core::Clock> clock;  // null: the system clock
  // The agent's shutdown: ends a wait before a retry (a 503 with Retry-After while the operator
  // is busy) at once. May be null.
  core::CancellationToken* stop = nullptr;
};

class OperatorCredentials final : public CredentialSecrets {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<OperatorCredentials>> Create(
      OperatorCredentialsOptions options, core::Logger logger);

  [[nodiscard]] core::Result<SigningCredentials> Read(const std::string& namespace_name,
                                                      const std::string& name, bool fresh) override;
  [[nodiscard]] core::Result<std::string> ReadToken(const std::string& namespace_name,
                                                    const std::string& name, bool fresh) override;

 private:
  // What the operator answered for one Secret: object-store keys, a hub token, or both.
  struct Answer {
    SigningCredentials credentials;
    std::string token;
  };
  struct Held {
    Answer answer;
    core::Clock::SteadyTime fetched_at;
  };
  [[nodiscard]] core::Result<Answer> Lookup(const std::string& namespace_name,
                                            const std::string& name, bool fresh);
  OperatorCredentials(OperatorCredentialsOptions options, std::unique_ptr<core::HttpClient> http,
                      core::Logger logger)
      : options_(std::move(options)), http_(std::move(http)), logger_(std::move(logger)) {}
  [[nodiscard]] core::Result<Answer> Fetch(const std::string& namespace_name,
                                           const std::string& name) const;

  const OperatorCredentialsOptions options_;
  const std::unique_ptr<core::HttpClient> http_;
  const core::Logger logger_;
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, Held> held_;  // guarded by mutex_
};

}  // namespace modelplane::agent
