#include "node-agent/sources/revision_sources.h"

#include <map>

#include <fmt/format.h>

#include "core/api/hub_source.h"
#include "core/api/source_identity.h"
#include "node-agent/sources/http_origin_range_source.h"
#include "node-agent/sources/hub_range_source.h"
#include "node-agent/sources/identified_source.h"
#include "node-agent/sources/s3_range_source.h"
#include "node-agent/sources/shared_filesystem_range_source.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;
using core::MakeError;

std::size_t Concurrency(const core::api::ModelSource& source,
                        const SourceEnvironment& environment) {
  if (source.capacity && source.capacity->max_concurrent_fetches &&
      *source.capacity->max_concurrent_fetches > 0) {
    return static_cast<std::size_t>(*source.capacity->max_concurrent_fetches);
  }
  return environment.default_concurrency;
}

// One client per address policy, shared by the http and hub sources that may connect to the
// same addresses.
using HttpClients = std::map<std::string, std::shared_ptr<core::HttpClient>>;

core::Result<std::shared_ptr<core::HttpClient>> ClientFor(const core::SourceGrant& grant,
                                                          const SourceEnvironment& environment,
                                                          HttpClients& clients) {
  std::shared_ptr<core::HttpClient>& client =
      clients[grant.addresses ? grant.addresses->ToString() : "any"];
  if (!client) {
    core::ClientOptions options = environment.http;
    if (grant.addresses) options.address_policy = grant.addresses;
    auto created = core::HttpClient::Create(std::move(options));
    if (!created) return std::unexpected(created.error());
    client = std::move(*created);
  }
  return client;
}

// A hub's token comes only from the source's credentialsSecretRef, in the namespace its grant
// names; the agent has no token of its own to lend.
HubTokenProvider TokenProviderFor(const core::api::ModelSource& source,
                                  const core::SourceGrant& grant,
                                  const SourceEnvironment& environment) {
  if (!source.credentials_secret_ref) return nullptr;
  const std::string name = source.credentials_secret_ref->name;
  if (!environment.secrets) {
    return [name](bool) -> core::Result<std::string> {
      return MakeError(ErrorCode::kNotFound,
                       fmt::format("credentialsSecretRef {}: this agent has no way to read "
                                   "Secrets (credentials is not configured)",
                                   name));
    };
  }
  return [secrets = environment.secrets, secret_namespace = grant.secret_namespace,
          name](bool fresh) { return secrets->ReadToken(secret_namespace, name, fresh); };
}

std::string CredentialScope(const core::api::ModelSource& source, const core::SourceGrant& grant) {
  if (!source.credentials_secret_ref) return "";
  return fmt::format("{}/{}", grant.secret_namespace, source.credentials_secret_ref->name);
}

core::Result<std::unique_ptr<HubRangeSource>> CreateHubSource(const core::api::ModelSource& source,
                                                              const core::api::HubLocation& hub,
                                                              const core::SourceGrant& grant,
                                                              const SourceEnvironment& environment,
                                                              std::size_t concurrency,
                                                              HttpClients& clients) {
  auto client = ClientFor(grant, environment, clients);
  if (!client) return std::unexpected(client.error());
  return HubRangeSource::Create(*client, {.name = source.name,
                                          .type = source.type,
                                          .endpoint = core::api::HubEndpoint(source),
                                          .repository = hub.repository,
                                          .commit = hub.commit,
                                          .redirect_hosts = grant.redirect_hosts,
                                          .max_concurrency = concurrency,
                                          .read_timeout = environment.http.read_timeout,
                                          .token = TokenProviderFor(source, grant, environment),
                                          .credential_scope = CredentialScope(source, grant),
                                          .redirects = environment.hub_redirects,
                                          .clock = environment.clock});
}

}  // namespace

std::vector<core::SourceGrant> OperatorNamedGrants(
    const std::vector<core::api::ModelSource>& sources) {
  std::vector<core::SourceGrant> grants;
  grants.reserve(sources.size());
  for (const core::api::ModelSource& source : sources) {
    grants.push_back(
        {.confine_root = source.shared_filesystem ? source.shared_filesystem->path : "",
         .node_credentials = true});
  }
  return grants;
}

core::Result<std::unique_ptr<S3Client>> CreateS3ClientForSource(
    const core::api::ModelSource& source, const core::SourceGrant& grant,
    const SourceEnvironment& environment) {
  if (!source.object_store) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("source {} has no objectStore location", source.name));
  }
  const core::api::ObjectStoreLocation& location = *source.object_store;
  core::Result<SigningCredentials> credentials = MakeError(
      ErrorCode::kPermissionDenied,
      "no credentialsSecretRef, and the source policy does not lend it the agent's credentials");
  std::function<core::Result<SigningCredentials>()> refresh;
  if (source.credentials_secret_ref && !environment.secrets) {
    credentials = MakeError(ErrorCode::kNotFound,
                            fmt::format("credentialsSecretRef {}: this agent has no way to read "
                                        "Secrets (credentials is not configured)",
                                        source.credentials_secret_ref->name));
  } else if (source.credentials_secret_ref) {
    credentials = environment.secrets->Read(grant.secret_namespace,
                                            source.credentials_secret_ref->name, false);
    refresh = [secrets = environment.secrets, secret_namespace = grant.secret_namespace,
               name = source.credentials_secret_ref->name] {
      return secrets->Read(secret_namespace, name, true);
    };
  } else if (grant.node_credentials) {
    credentials = CredentialsFromEnvironment(environment.environment);
  }
  if (!credentials) {
    return std::unexpected(credentials.error().Wrap(fmt::format("source {}", source.name)));
  }
  S3ClientOptions options;
  options.region = !location.region.empty()
                       ? location.region
                       : RegionFromEnvironment(environment.environment).value_or("us-east-1");
  options.endpoint = !location.endpoint.empty()
                         ? location.endpoint
                         : fmt::format("https://s3.{}.amazonaws.com", options.region);
  while (options.endpoint.size() > 1 && options.endpoint.back() == '/') {
    options.endpoint.pop_back();
  }
  options.addressing = environment.s3_addressing;
  options.credentials = std::move(*credentials);
  options.refresh_credentials = std::move(refresh);
  options.http = environment.http;
  if (grant.addresses) options.http.address_policy = grant.addresses;
  options.clock = environment.clock;
  auto client = S3Client::Create(std::move(options));
  if (!client) return std::unexpected(client.error().Wrap(fmt::format("source {}", source.name)));
  return client;
}

core::Result<std::vector<std::unique_ptr<RangeSource>>> CreateRevisionSources(
    const std::vector<core::api::ModelSource>& sources, std::span<const core::SourceGrant> grants,
    const SourceEnvironment& environment) {
  if (grants.size() != sources.size()) {
    return MakeError(ErrorCode::kInternal,
                     fmt::format("{} sources but {} grants", sources.size(), grants.size()));
  }
  std::vector<std::unique_ptr<RangeSource>> result;
  HttpClients http_clients;
  for (std::size_t index = 0; index < sources.size(); ++index) {
    const core::api::ModelSource& source = sources[index];
    const core::SourceGrant& grant = grants[index];
    const std::size_t concurrency = Concurrency(source, environment);
    if (source.type == core::api::kSourceObjectStore) {
      auto client = CreateS3ClientForSource(source, grant, environment);
      if (!client) return std::unexpected(client.error());
      auto created = S3RangeSource::Create(std::shared_ptr<S3Client>(std::move(*client)),
                                           {.name = source.name,
                                            .bucket = source.object_store->bucket,
                                            .prefix = source.object_store->prefix,
                                            .max_concurrency = concurrency});
      if (!created) return std::unexpected(created.error());
      result.push_back(std::make_unique<IdentifiedSource>(std::move(*created),
                                                          core::api::SourceIdentity(source)));
    } else if (source.type == core::api::kSourceHttp && source.http) {
      auto http_client = ClientFor(grant, environment, http_clients);
      if (!http_client) return std::unexpected(http_client.error());
      auto created = HttpOriginRangeSource::Create(*http_client,
                                                   {.name = source.name,
                                                    .base_url = source.http->base_url,
                                                    .max_concurrency = concurrency,
                                                    .read_timeout = environment.http.read_timeout});
      if (!created) {
        return std::unexpected(created.error().Wrap(fmt::format("source {}", source.name)));
      }
      result.push_back(std::make_unique<IdentifiedSource>(std::move(*created),
                                                          core::api::SourceIdentity(source)));
    } else if (const core::api::HubLocation* hub = core::api::HubLocationOf(source)) {
      auto created = CreateHubSource(source, *hub, grant, environment, concurrency, http_clients);
      if (!created) {
        return std::unexpected(created.error().Wrap(fmt::format("source {}", source.name)));
      }
      result.push_back(std::make_unique<IdentifiedSource>(std::move(*created),
                                                          core::api::SourceIdentity(source)));
    } else if (source.type == core::api::kSourceSharedFilesystem && source.shared_filesystem) {
      auto created = SharedFilesystemRangeSource::Create({.name = source.name,
                                                          .root = source.shared_filesystem->path,
                                                          .confine_to = grant.confine_root,
                                                          .max_concurrency = concurrency});
      if (!created) {
        return std::unexpected(created.error().Wrap(fmt::format("source {}", source.name)));
      }
      result.push_back(std::make_unique<IdentifiedSource>(std::move(*created),
                                                          core::api::SourceIdentity(source)));
    } else {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("source {} has type \"{}\" without its location", source.name, source.type));
    }
  }
  return result;
}

}  // namespace modelplane::agent
