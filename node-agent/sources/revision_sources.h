// Turns a ModelRevision's spec.sources into RangeSources, in the order listed: objectStore ->
// S3RangeSource, http -> HttpOriginRangeSource, sharedFilesystem -> SharedFilesystemRangeSource.
//
// Each source comes with the grant the source policy gave it (core/policy/source_policy.h): a
// shared filesystem's files are opened beneath the policy root that allowed it, and only a
// grant with node_credentials lets an objectStore source without credentialsSecretRef use
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN from the environment. A source
// with a reference reads the Secret through `secrets` (credential_secrets.h), in the namespace
// its grant names, asks again when the store refuses the keys, and fails when there is no
// `secrets`, never falling back to the node's own credentials. The region
// is the source's, else AWS_REGION, else us-east-1; a source without an endpoint uses AWS's
// regional endpoint. Object-store and HTTP sources connect only to the addresses their grant
// allows (core::SourceGrant::addresses); a refusal is kAddressDenied and fails that source.
// Thread safety: a pure function; the sources it returns are thread-safe (range_source.h).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/api/model_revision.h"
#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/http/http_client.h"
#include "core/policy/source_policy.h"
#include "node-agent/fetch/range_source.h"
#include "node-agent/sources/credential_secrets.h"
#include "node-agent/sources/hub_redirect_memory.h"
#include "node-agent/sources/s3_client.h"
#include "node-agent/sources/s3_credentials.h"

namespace modelplane::agent {

// Client options for sources: no retries inside the client, since the fetch engine retries and
// fails over between sources itself, and a client retry would overrun ReadContext deadlines.
[[nodiscard]] inline core::ClientOptions SourceClientOptions() {
  core::ClientOptions options;
  options.retry.max_attempts = 1;
  return options;
}

struct SourceEnvironment {
  // Resolves credentialsSecretRef; null: a source with one fails.
  std::shared_ptr<CredentialSecrets> secrets;
  EnvironmentLookup environment = ProcessEnvironment();
  core::ClientOptions http = SourceClientOptions();
  S3AddressingStyle s3_addressing = S3AddressingStyle::kPath;
  // ReadRange calls in flight per source when the source's capacity.maxConcurrentFetches is
  // unset.
  std::size_t default_concurrency = 16;
  std::shared_ptr<const core::Clock> clock;  // null: the system clock
  // Where hub resolve URLs redirected, shared by every copy of this environment: one agent's
  // stagings and proofs (hub_redirect_memory.h).
  std::shared_ptr<HubRedirectMemory> hub_redirects = std::make_shared<HubRedirectMemory>();
};

// `grants` holds one grant per source, as core::AuthorizeSources returns them.
[[nodiscard]] core::Result<std::vector<std::unique_ptr<RangeSource>>> CreateRevisionSources(
    const std::vector<core::api::ModelSource>& sources, std::span<const core::SourceGrant> grants,
    const SourceEnvironment& environment);

// For the command-line tools, which read what the person running them names: each shared
// filesystem confined to its own path, object stores free to use the environment's credentials.
[[nodiscard]] std::vector<core::SourceGrant> OperatorNamedGrants(
    const std::vector<core::api::ModelSource>& sources);

// The S3 client one objectStore source needs (also used by the manifest builder).
[[nodiscard]] core::Result<std::unique_ptr<S3Client>> CreateS3ClientForSource(
    const core::api::ModelSource& source, const core::SourceGrant& grant,
    const SourceEnvironment& environment);

}  // namespace modelplane::agent
