#include "node-agent/sources/s3_credentials.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/io/bounded_file.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;
using core::MakeError;

// A key is tens of bytes and a shared credentials file a few profiles: anything larger is not
// one, and must not cost memory in proportion to what the path holds.
constexpr std::size_t kMaxKeyFileBytes = 64 * 1024;
constexpr std::size_t kMaxSharedFileBytes = 1024 * 1024;

std::string_view Trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// nullopt when the file does not exist; an error when it exists but cannot be read.
core::Result<std::optional<std::string>> ReadKeyFile(const std::string& path) {
  auto text = core::ReadBoundedFile(path, kMaxKeyFileBytes);
  if (!text) {
    if (text.error().code() == ErrorCode::kNotFound) return std::nullopt;
    return std::unexpected(text.error());
  }
  return std::string(Trim(*text));
}

// The first of `names` present in `directory`.
core::Result<std::optional<std::string>> ReadFirstKey(
    const std::string& directory, std::initializer_list<std::string_view> names) {
  for (const std::string_view name : names) {
    auto value = ReadKeyFile(fmt::format("{}/{}", directory, name));
    if (!value) return std::unexpected(value.error());
    if (value->has_value()) return value;
  }
  return std::nullopt;
}

}  // namespace

EnvironmentLookup ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): the agent never modifies its environment
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

core::Result<SigningCredentials> CredentialsFromEnvironment(const EnvironmentLookup& environment) {
  SigningCredentials credentials;
  credentials.access_key_id = environment("AWS_ACCESS_KEY_ID").value_or("");
  credentials.secret_access_key = environment("AWS_SECRET_ACCESS_KEY").value_or("");
  credentials.session_token = environment("AWS_SESSION_TOKEN").value_or("");
  if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
    return MakeError(ErrorCode::kUnauthenticated,
                     "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must both be set");
  }
  return credentials;
}

std::optional<std::string> RegionFromEnvironment(const EnvironmentLookup& environment) {
  if (auto region = environment("AWS_REGION"); region && !region->empty()) return region;
  if (auto region = environment("AWS_DEFAULT_REGION"); region && !region->empty()) return region;
  return std::nullopt;
}

core::Result<SigningCredentials> CredentialsFromDirectory(const std::string& directory) {
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("credentials directory {} does not exist", directory));
  }
  auto access_key = ReadFirstKey(directory, {"accessKeyId", "AWS_ACCESS_KEY_ID"});
  if (!access_key) return std::unexpected(access_key.error());
  auto secret_key = ReadFirstKey(directory, {"secretAccessKey", "AWS_SECRET_ACCESS_KEY"});
  if (!secret_key) return std::unexpected(secret_key.error());
  auto token = ReadFirstKey(directory, {"sessionToken", "AWS_SESSION_TOKEN"});
  if (!token) return std::unexpected(token.error());
  if (!*access_key || !*secret_key) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("credentials directory {} lacks {}", directory,
                                 !*access_key ? "accessKeyId" : "secretAccessKey"));
  }
  if ((*access_key)->empty() || (*secret_key)->empty()) {
    return MakeError(ErrorCode::kUnauthenticated,
                     fmt::format("credentials directory {} has an empty key", directory));
  }
  return SigningCredentials{.access_key_id = **access_key,
                            .secret_access_key = **secret_key,
                            .session_token = token->value_or("")};
}

core::Result<std::string> TokenFromDirectory(const std::string& directory) {
  auto token = ReadFirstKey(directory, {"token", "HF_TOKEN", "MODELSCOPE_API_TOKEN"});
  if (!token) return std::unexpected(token.error());
  if (!*token || (*token)->empty()) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("credentials directory {} has no token", directory));
  }
  return **token;
}

core::Result<SigningCredentials> CredentialsFromSharedFile(const std::string& path,
                                                           std::string_view profile) {
  auto content = core::ReadBoundedFile(path, kMaxSharedFileBytes);
  if (!content) {
    if (content.error().code() != ErrorCode::kNotFound) return std::unexpected(content.error());
    return MakeError(ErrorCode::kNotFound, fmt::format("credentials file {} cannot be read: {}",
                                                       path, content.error().message()));
  }
  std::istringstream in(*content);
  SigningCredentials credentials;
  bool in_profile = false;
  bool found = false;
  std::string line;
  while (std::getline(in, line)) {
    const std::string_view text = Trim(line);
    if (text.empty() || text.front() == '#' || text.front() == ';') continue;
    if (text.front() == '[' && text.back() == ']') {
      in_profile = Trim(text.substr(1, text.size() - 2)) == profile;
      found = found || in_profile;
      continue;
    }
    if (!in_profile) continue;
    const std::size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view key = Trim(text.substr(0, equals));
    const std::string value(Trim(text.substr(equals + 1)));
    if (key == "aws_access_key_id") credentials.access_key_id = value;
    if (key == "aws_secret_access_key") credentials.secret_access_key = value;
    if (key == "aws_session_token") credentials.session_token = value;
  }
  if (!found) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("credentials file {} has no profile [{}]", path, profile));
  }
  if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
    return MakeError(ErrorCode::kUnauthenticated,
                     fmt::format("profile [{}] of {} lacks aws_access_key_id or "
                                 "aws_secret_access_key",
                                 profile, path));
  }
  return credentials;
}

}  // namespace modelplane::agent
