#include "node-agent/sources/operator_credentials.h"

#include <fmt/format.h>

#include "core/io/bounded_file.h"
#include "core/json/json_document.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;
using core::MakeError;
namespace http = boost::beast::http;

// An answer is three short keys; anything larger is not one.
constexpr std::size_t kMaxAnswerBytes = 64 * 1024;

// A projected ServiceAccount token is a JWT of a few KiB.
constexpr std::size_t kMaxTokenBytes = 64 * 1024;

core::Result<std::string> ReadServiceAccountToken(const std::string& path) {
  auto read = core::ReadBoundedFile(path, kMaxTokenBytes);
  if (!read) {
    // Missing or unreadable now may be a token the kubelet is rotating: retry later. One too
    // big, or not a file at all, stays so.
    if (read.error().code() == ErrorCode::kInvalidArgument) {
      return std::unexpected(read.error().Wrap("reading the ServiceAccount token"));
    }
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("reading the ServiceAccount token: {}", read.error().message()));
  }
  std::string token = *std::move(read);
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  if (token.empty()) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("the ServiceAccount token {} is empty", path));
  }
  return token;
}

}  // namespace

core::Result<std::unique_ptr<OperatorCredentials>> OperatorCredentials::Create(
    OperatorCredentialsOptions options, core::Logger logger) {
  auto url = core::Url::Parse(options.url);
  if (!url) return std::unexpected(url.error().Wrap("credentials url"));
  if (!url->tls) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("credentials url {} must be https://", options.url));
  }
  if (options.token_file.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "credentials tokenFile must be set");
  }
  while (!options.url.empty() && options.url.back() == '/') options.url.pop_back();
  if (!options.clock) options.clock = std::make_shared<core::SystemClock>();
  core::ClientOptions client;
  client.tls = core::TlsClientOptions{.ca_file = options.ca_file};
  client.connect_timeout = options.timeout;
  client.read_timeout = options.timeout;
  client.max_connections_per_origin = 2;
  client.retry.max_attempts = 4;  // 503 with Retry-After while the operator is busy
  auto http_client = core::HttpClient::Create(std::move(client));
  if (!http_client) return std::unexpected(http_client.error());
  return std::unique_ptr<OperatorCredentials>(
      new OperatorCredentials(std::move(options), std::move(*http_client), std::move(logger)));
}

core::Result<SigningCredentials> OperatorCredentials::Read(const std::string& namespace_name,
                                                           const std::string& name, bool fresh) {
  auto answer = Lookup(namespace_name, name, fresh);
  if (!answer) return std::unexpected(answer.error());
  if (answer->credentials.access_key_id.empty() || answer->credentials.secret_access_key.empty()) {
    return MakeError(ErrorCode::kUnauthenticated,
                     fmt::format("credentialsSecretRef {}/{}: the Secret has no accessKeyId and "
                                 "secretAccessKey",
                                 namespace_name, name));
  }
  return answer->credentials;
}

core::Result<std::string> OperatorCredentials::ReadToken(const std::string& namespace_name,
                                                         const std::string& name, bool fresh) {
  auto answer = Lookup(namespace_name, name, fresh);
  if (!answer) return std::unexpected(answer.error());
  if (answer->token.empty()) {
    return MakeError(
        ErrorCode::kUnauthenticated,
        fmt::format("credentialsSecretRef {}/{}: the Secret has no token", namespace_name, name));
  }
  return answer->token;
}

core::Result<OperatorCredentials::Answer> OperatorCredentials::Lookup(
    const std::string& namespace_name, const std::string& name, bool fresh) {
  const auto key = std::make_pair(namespace_name, name);
  const auto now = options_.clock->Now();
  {
    const std::scoped_lock lock(mutex_);
    if (auto found = held_.find(key); found != held_.end()) {
      const auto age = now - found->second.fetched_at;
      if (age < (fresh ? options_.min_refresh : options_.ttl)) return found->second.answer;
      held_.erase(found);
    }
  }
  auto fetched = Fetch(namespace_name, name);
  if (!fetched) {
    logger_.Warn(
        "secret_credentials_refused",
        {{"namespace", namespace_name}, {"secret", name}, {"error", fetched.error().ToString()}});
    return fetched;
  }
  logger_.Info(
      "secret_credentials_fetched",
      {{"namespace", namespace_name}, {"secret", name}, {"fresh", fresh ? "true" : "false"}});
  const std::scoped_lock lock(mutex_);
  held_[key] = Held{.answer = *fetched, .fetched_at = now};
  return fetched;
}

core::Result<OperatorCredentials::Answer> OperatorCredentials::Fetch(
    const std::string& namespace_name, const std::string& name) const {
  auto token = ReadServiceAccountToken(options_.token_file);
  if (!token) return std::unexpected(token.error());
  core::ClientRequest request;
  request.method = http::verb::get;
  request.url =
      fmt::format("{}{}{}/{}", options_.url, kCredentialsPathPrefix, namespace_name, name);
  request.headers.set(http::field::authorization, "Bearer " + *token);
  request.headers.set(http::field::accept, "application/json");
  request.cancel = options_.stop;
  auto response = http_->Fetch(request, kMaxAnswerBytes);
  if (!response) {
    return std::unexpected(
        response.error().Wrap(fmt::format("credentialsSecretRef {}/{}", namespace_name, name)));
  }
  auto body = core::ParseJsonDocument(response->body, {.max_bytes = kMaxAnswerBytes});
  const auto malformed = [&] {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("credentialsSecretRef {}/{}: the operator's answer is not "
                                 "{{[accessKeyId, secretAccessKey[, sessionToken]], [token]}}",
                                 namespace_name, name));
  };
  if (!body || !body->is_object()) return malformed();
  const auto text = [&](const char* field) {
    const auto found = body->find(field);
    return found != body->end() && found->is_string() ? found->get<std::string>() : std::string();
  };
  Answer answer;
  answer.credentials.access_key_id = text("accessKeyId");
  answer.credentials.secret_access_key = text("secretAccessKey");
  answer.credentials.session_token = text("sessionToken");
  answer.token = text("token");
  const bool has_keys =
      !answer.credentials.access_key_id.empty() && !answer.credentials.secret_access_key.empty();
  if (!has_keys && answer.token.empty()) {
    // Not kept: the next read asks again.
    return MakeError(ErrorCode::kUnauthenticated,
                     fmt::format("credentialsSecretRef {}/{}: the Secret has neither "
                                 "accessKeyId and secretAccessKey nor token",
                                 namespace_name, name));
  }
  return answer;
}

}  // namespace modelplane::agent
