// Where object-store credentials come from: the process environment, a directory of key files
// (a Kubernetes Secret mounted as a volume), or an AWS shared-credentials file.
//
// Secret directory: one file per key, the value being the whole file with trailing whitespace
// removed. Names: `accessKeyId` and `secretAccessKey` (required), `sessionToken` (optional); the
// environment-variable spellings AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN
// are accepted as well, so a Secret made with `kubectl create secret --from-env-file` works too.
// Shared-credentials file: INI sections "[profile]" with aws_access_key_id,
// aws_secret_access_key and aws_session_token.
// Thread safety: pure functions (the environment is read through the lookup given).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/error/error.h"
#include "node-agent/sources/sigv4_signer.h"

namespace modelplane::agent {

// Reads one environment variable; nullopt when unset. Injected so tests need not touch the
// process environment.
using EnvironmentLookup = std::function<std::optional<std::string>(std::string_view)>;

// The real process environment.
[[nodiscard]] EnvironmentLookup ProcessEnvironment();

// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and optional AWS_SESSION_TOKEN; kUnauthenticated when
// the first two are not both set.
[[nodiscard]] core::Result<SigningCredentials> CredentialsFromEnvironment(
    const EnvironmentLookup& environment);

// AWS_REGION, else AWS_DEFAULT_REGION; nullopt when neither is set.
[[nodiscard]] std::optional<std::string> RegionFromEnvironment(
    const EnvironmentLookup& environment);

// A mounted Secret: see the file comment. kNotFound when the directory or a required key is
// missing, kUnauthenticated when a key file is empty.
[[nodiscard]] core::Result<SigningCredentials> CredentialsFromDirectory(
    const std::string& directory);

// A hub token from a mounted Secret: the file `token`, else `HF_TOKEN`, else
// `MODELSCOPE_API_TOKEN`, trailing whitespace removed. kNotFound when none is there.
[[nodiscard]] core::Result<std::string> TokenFromDirectory(const std::string& directory);

// One profile of an AWS shared-credentials file.
[[nodiscard]] core::Result<SigningCredentials> CredentialsFromSharedFile(
    const std::string& path, std::string_view profile = "default");

}  // namespace modelplane::agent
