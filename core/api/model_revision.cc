#include "core/api/model_revision.h"

#include <utility>

#include "core/api/limits.h"
#include "core/json/json_object_reader.h"

namespace modelplane::core::api {
namespace {

Result<ModelFile> FileFromJson(const JsonObjectReader& reader) {
  ModelFile file;
  MODELPLANE_JSON_TRY(reader.String("path", file.path, kMaxPathLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.Int64("size", file.size, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("sha256", file.sha256, kMaxDigestLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("role", file.role, kMaxEnumLength, Presence::kRequired));
  return file;
}

Result<Parallelism> ParallelismFromJson(const JsonObjectReader& reader) {
  Parallelism parallelism;
  MODELPLANE_JSON_TRY(reader.Int32("tensorParallel", parallelism.tensor_parallel));
  MODELPLANE_JSON_TRY(reader.Int32("pipelineParallel", parallelism.pipeline_parallel));
  return parallelism;
}

Result<Quantization> QuantizationFromJson(const JsonObjectReader& reader) {
  Quantization quantization;
  MODELPLANE_JSON_TRY(
      reader.String("method", quantization.method, kMaxEnumLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.StringMap("parameters", quantization.parameters, kMaxSmallMapEntries,
                                       kMaxMapKeyLength, kMaxShortString));
  return quantization;
}

Result<EngineIdentity> EngineFromJson(const JsonObjectReader& reader) {
  EngineIdentity engine;
  MODELPLANE_JSON_TRY(reader.String("name", engine.name, kMaxEnumLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(
      reader.String("version", engine.version, kMaxShortString, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("runtimeCacheKey", engine.runtime_cache_key, kMaxShortString));
  return engine;
}

Result<ObjectStoreLocation> ObjectStoreFromJson(const JsonObjectReader& reader) {
  ObjectStoreLocation location;
  MODELPLANE_JSON_TRY(reader.String("endpoint", location.endpoint, 512));
  MODELPLANE_JSON_TRY(reader.String("bucket", location.bucket, 255, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("prefix", location.prefix, 1024));
  MODELPLANE_JSON_TRY(reader.String("region", location.region, 64));
  return location;
}

Result<HttpLocation> HttpFromJson(const JsonObjectReader& reader) {
  HttpLocation location;
  MODELPLANE_JSON_TRY(reader.String("baseURL", location.base_url, 2048, Presence::kRequired));
  return location;
}

Result<SharedFilesystemLocation> SharedFilesystemFromJson(const JsonObjectReader& reader) {
  SharedFilesystemLocation location;
  MODELPLANE_JSON_TRY(reader.String("path", location.path, 1024, Presence::kRequired));
  return location;
}

Result<HubLocation> HubFromJson(const JsonObjectReader& reader) {
  HubLocation location;
  MODELPLANE_JSON_TRY(reader.String("endpoint", location.endpoint, 512));
  MODELPLANE_JSON_TRY(reader.String("repository", location.repository, 256, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("commit", location.commit, 64, Presence::kRequired));
  return location;
}

Result<SecretReference> SecretReferenceFromJson(const JsonObjectReader& reader) {
  SecretReference ref;
  MODELPLANE_JSON_TRY(reader.String("name", ref.name, kMaxShortString, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("namespace", ref.namespace_name, kMaxShortString));
  return ref;
}

Result<SourceCapacity> CapacityFromJson(const JsonObjectReader& reader) {
  SourceCapacity capacity;
  MODELPLANE_JSON_TRY(reader.Int64("maxBytesPerSecond", capacity.max_bytes_per_second));
  MODELPLANE_JSON_TRY(reader.Int32("maxConcurrentFetches", capacity.max_concurrent_fetches));
  return capacity;
}

Result<ModelSource> SourceFromJson(const JsonObjectReader& reader) {
  ModelSource source;
  MODELPLANE_JSON_TRY(reader.String("name", source.name, 63, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("type", source.type, kMaxEnumLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(
      reader.Object<ObjectStoreLocation>("objectStore", source.object_store, ObjectStoreFromJson));
  MODELPLANE_JSON_TRY(reader.Object<HttpLocation>("http", source.http, HttpFromJson));
  MODELPLANE_JSON_TRY(reader.Object<SharedFilesystemLocation>(
      "sharedFilesystem", source.shared_filesystem, SharedFilesystemFromJson));
  MODELPLANE_JSON_TRY(reader.Object<HubLocation>("huggingFace", source.hugging_face, HubFromJson));
  MODELPLANE_JSON_TRY(reader.Object<HubLocation>("modelScope", source.model_scope, HubFromJson));
  MODELPLANE_JSON_TRY(reader.Object<SecretReference>(
      "credentialsSecretRef", source.credentials_secret_ref, SecretReferenceFromJson));
  MODELPLANE_JSON_TRY(reader.Object<SourceCapacity>("capacity", source.capacity, CapacityFromJson));
  return source;
}

Result<BaseRevision> BaseFromJson(const JsonObjectReader& reader) {
  BaseRevision base;
  MODELPLANE_JSON_TRY(reader.String("digest", base.digest, 128, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("name", base.name, kMaxShortString));
  return base;
}

Result<PrestagePolicy> PrestageFromJson(const JsonObjectReader& reader) {
  PrestagePolicy prestage;
  MODELPLANE_JSON_TRY(reader.StringMap("nodeSelector", prestage.node_selector, kMaxSmallMapEntries,
                                       kMaxMapKeyLength, 63));
  MODELPLANE_JSON_TRY(reader.Int32("nodes", prestage.nodes));
  return prestage;
}

Result<RetentionPolicy> RetentionFromJson(const JsonObjectReader& reader) {
  RetentionPolicy retention;
  MODELPLANE_JSON_TRY(reader.String("rollbackWindow", retention.rollback_window, 32));
  return retention;
}

Result<ModelSignature> SignatureFromJson(const JsonObjectReader& reader) {
  ModelSignature signature;
  MODELPLANE_JSON_TRY(
      reader.String("bundle", signature.bundle, kMaxSignatureBundleLength, Presence::kRequired));
  return signature;
}

Result<ModelRevisionSpec> RevisionSpecFromReader(const JsonObjectReader& reader) {
  ModelRevisionSpec spec;
  MODELPLANE_JSON_TRY(reader.String("modelName", spec.model_name, 253));
  MODELPLANE_JSON_TRY(reader.String("repositoryRevision", spec.repository_revision, 256));
  MODELPLANE_JSON_TRY(reader.ObjectArray<ModelFile>("files", spec.files, kMaxFiles, FileFromJson,
                                                    Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("format", spec.format, kMaxEnumLength, Presence::kRequired));
  std::optional<Parallelism> parallelism;
  MODELPLANE_JSON_TRY(reader.Object<Parallelism>("parallelism", parallelism, ParallelismFromJson));
  spec.parallelism = parallelism.value_or(Parallelism{});
  std::optional<Quantization> quantization;
  MODELPLANE_JSON_TRY(
      reader.Object<Quantization>("quantization", quantization, QuantizationFromJson));
  spec.quantization = quantization.value_or(Quantization{});
  MODELPLANE_JSON_TRY(reader.RequiredObject<EngineIdentity>("engine", spec.engine, EngineFromJson));
  MODELPLANE_JSON_TRY(reader.ObjectArray<ModelSource>("sources", spec.sources, kMaxSources,
                                                      SourceFromJson, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.Object<PrestagePolicy>("prestage", spec.prestage, PrestageFromJson));
  MODELPLANE_JSON_TRY(
      reader.Object<RetentionPolicy>("retention", spec.retention, RetentionFromJson));
  MODELPLANE_JSON_TRY(reader.Bool("revoked", spec.revoked));
  MODELPLANE_JSON_TRY(reader.ObjectArray<ModelSignature>("signatures", spec.signatures,
                                                         kMaxSignatures, SignatureFromJson));
  MODELPLANE_JSON_TRY(reader.Object<BaseRevision>("base", spec.base, BaseFromJson));
  return spec;
}

Result<NodeServing> NodeServingFromJson(const JsonObjectReader& reader) {
  NodeServing node;
  MODELPLANE_JSON_TRY(reader.String("node", node.node, 253, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("tier", node.tier, kMaxEnumLength));
  MODELPLANE_JSON_TRY(reader.Number("bytesToReadySeconds", node.bytes_to_ready_seconds));
  return node;
}

Result<WorkloadUse> WorkloadUseFromJson(const JsonObjectReader& reader) {
  WorkloadUse use;
  MODELPLANE_JSON_TRY(reader.String("kind", use.kind, kMaxEnumLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("name", use.name, 253, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("role", use.role, kMaxEnumLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.Int32("pods", use.pods));
  MODELPLANE_JSON_TRY(reader.Int32("readyPods", use.ready_pods));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "completedAt", use.completed_at));
  return use;
}

Result<FetchedBytes> FetchedFromJson(const JsonObjectReader& reader) {
  FetchedBytes fetched;
  MODELPLANE_JSON_TRY(reader.Int64Map("byTier", fetched.by_tier, kMaxTiers, kMaxMapKeyLength));
  MODELPLANE_JSON_TRY(reader.Int64("originBytes", fetched.origin_bytes));
  MODELPLANE_JSON_TRY(reader.Int64("originBytesPerReplica", fetched.origin_bytes_per_replica));
  return fetched;
}

Result<PurgeProgress> PurgeFromJson(const JsonObjectReader& reader) {
  PurgeProgress purge;
  MODELPLANE_JSON_TRY(reader.Int32("nodesHolding", purge.nodes_holding));
  MODELPLANE_JSON_TRY(reader.Int64("bytesHeld", purge.bytes_held));
  MODELPLANE_JSON_TRY(reader.StringList("nodes", purge.nodes, kMaxPurgeNodesListed, 253));
  return purge;
}

Result<SignedBy> SignedByFromJson(const JsonObjectReader& reader) {
  SignedBy signed_by;
  MODELPLANE_JSON_TRY(reader.String("signer", signed_by.signer, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.String("publicKey", signed_by.public_key, kMaxDigestLength));
  MODELPLANE_JSON_TRY(reader.String("identity", signed_by.identity, kMaxShortString));
  return signed_by;
}

Result<RevokedBy> RevokedByFromJson(const JsonObjectReader& reader) {
  RevokedBy revoked_by;
  MODELPLANE_JSON_TRY(reader.String("name", revoked_by.name, kMaxShortString, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("reason", revoked_by.reason, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.Bool("force", revoked_by.force));
  return revoked_by;
}

Result<LatencyPercentiles> PercentilesFromJson(const JsonObjectReader& reader) {
  std::optional<double> p50;
  std::optional<double> p95;
  std::optional<double> p99;
  MODELPLANE_JSON_TRY(reader.Number("p50", p50));
  MODELPLANE_JSON_TRY(reader.Number("p95", p95));
  MODELPLANE_JSON_TRY(reader.Number("p99", p99));
  return LatencyPercentiles{p50.value_or(0), p95.value_or(0), p99.value_or(0)};
}

Result<ModelRevisionStatus> RevisionStatusFromReader(const JsonObjectReader& reader) {
  ModelRevisionStatus status;
  MODELPLANE_JSON_TRY(reader.Int64("observedGeneration", status.observed_generation));
  MODELPLANE_JSON_TRY(reader.String("digest", status.digest, kMaxDigestLength));
  MODELPLANE_JSON_TRY(reader.Int64("totalBytes", status.total_bytes));
  MODELPLANE_JSON_TRY(reader.String("phase", status.phase, kMaxEnumLength));
  MODELPLANE_JSON_TRY(ReadConditions(reader, status.conditions));
  MODELPLANE_JSON_TRY(reader.Int32("desiredNodes", status.desired_nodes));
  MODELPLANE_JSON_TRY(reader.Int32("stagingNodes", status.staging_nodes));
  MODELPLANE_JSON_TRY(reader.Int32("readyNodes", status.ready_nodes));
  MODELPLANE_JSON_TRY(reader.Int32("failedNodes", status.failed_nodes));
  MODELPLANE_JSON_TRY(reader.Object<LatencyPercentiles>(
      "bytesToReadySeconds", status.bytes_to_ready_seconds, PercentilesFromJson));
  MODELPLANE_JSON_TRY(
      reader.ObjectArray<NodeServing>("nodes", status.nodes, kMaxStatusNodes, NodeServingFromJson));
  MODELPLANE_JSON_TRY(reader.ObjectArray<WorkloadUse>("workloads", status.workloads,
                                                      kMaxStatusWorkloads, WorkloadUseFromJson));
  MODELPLANE_JSON_TRY(reader.Object<PurgeProgress>("purge", status.purge, PurgeFromJson));
  MODELPLANE_JSON_TRY(reader.Object<FetchedBytes>("fetchedBytes", status.fetched, FetchedFromJson));
  MODELPLANE_JSON_TRY(reader.Object<RevokedBy>("revokedBy", status.revoked_by, RevokedByFromJson));
  MODELPLANE_JSON_TRY(
      reader.ObjectArray<SignedBy>("signedBy", status.signed_by, kMaxSignatures, SignedByFromJson));
  return status;
}

nlohmann::json ToJson(const ModelSource& source) {
  nlohmann::json out = {{"name", source.name}, {"type", source.type}};
  if (source.object_store) {
    nlohmann::json location = {{"bucket", source.object_store->bucket}};
    if (!source.object_store->endpoint.empty())
      location["endpoint"] = source.object_store->endpoint;
    if (!source.object_store->prefix.empty()) location["prefix"] = source.object_store->prefix;
    if (!source.object_store->region.empty()) location["region"] = source.object_store->region;
    out["objectStore"] = std::move(location);
  }
  if (source.http) out["http"] = {{"baseURL", source.http->base_url}};
  if (source.shared_filesystem)
    out["sharedFilesystem"] = {{"path", source.shared_filesystem->path}};
  const auto hub_json = [](const HubLocation& location) {
    nlohmann::json hub = {{"repository", location.repository}, {"commit", location.commit}};
    if (!location.endpoint.empty()) hub["endpoint"] = location.endpoint;
    return hub;
  };
  if (source.hugging_face) out["huggingFace"] = hub_json(*source.hugging_face);
  if (source.model_scope) out["modelScope"] = hub_json(*source.model_scope);
  if (source.credentials_secret_ref) {
    out["credentialsSecretRef"] = {{"name", source.credentials_secret_ref->name}};
    if (!source.credentials_secret_ref->namespace_name.empty()) {
      out["credentialsSecretRef"]["namespace"] = source.credentials_secret_ref->namespace_name;
    }
  }
  if (source.capacity) {
    nlohmann::json capacity = nlohmann::json::object();
    if (source.capacity->max_bytes_per_second) {
      capacity["maxBytesPerSecond"] = *source.capacity->max_bytes_per_second;
    }
    if (source.capacity->max_concurrent_fetches) {
      capacity["maxConcurrentFetches"] = *source.capacity->max_concurrent_fetches;
    }
    out["capacity"] = std::move(capacity);
  }
  return out;
}

}  // namespace

Result<ModelRevisionSpec> ModelRevisionSpecFromJson(const nlohmann::json& value, std::string path) {
  auto reader = JsonObjectReader::Create(value, std::move(path));
  if (!reader) return std::unexpected(reader.error());
  return RevisionSpecFromReader(*reader);
}

Result<ModelRevision> ModelRevisionFromJson(const nlohmann::json& value) {
  auto reader = JsonObjectReader::Create(value, "");
  if (!reader) return std::unexpected(reader.error());
  ModelRevision revision;
  auto meta = ReadTypeAndObjectMeta(*reader, kApiVersion, kModelRevisionKind);
  if (!meta) return std::unexpected(meta.error());
  revision.metadata = std::move(*meta);
  MODELPLANE_JSON_TRY(
      reader->RequiredObject<ModelRevisionSpec>("spec", revision.spec, RevisionSpecFromReader));
  MODELPLANE_JSON_TRY(
      reader->Object<ModelRevisionStatus>("status", revision.status, RevisionStatusFromReader));
  return revision;
}

Result<ModelRevision> ParseModelRevision(std::string_view json_text, const JsonLimits& limits) {
  auto document = ParseJsonDocument(json_text, limits);
  if (!document) return std::unexpected(document.error());
  return ModelRevisionFromJson(*document);
}

nlohmann::json ToJson(const ModelRevisionSpec& spec) {
  nlohmann::json out = nlohmann::json::object();
  if (!spec.model_name.empty()) out["modelName"] = spec.model_name;
  if (!spec.repository_revision.empty()) out["repositoryRevision"] = spec.repository_revision;
  nlohmann::json files = nlohmann::json::array();
  for (const ModelFile& file : spec.files) {
    files.push_back(
        {{"path", file.path}, {"size", file.size}, {"sha256", file.sha256}, {"role", file.role}});
  }
  out["files"] = std::move(files);
  out["format"] = spec.format;
  out["parallelism"] = {{"tensorParallel", spec.parallelism.tensor_parallel},
                        {"pipelineParallel", spec.parallelism.pipeline_parallel}};
  nlohmann::json quantization = {{"method", spec.quantization.method}};
  if (!spec.quantization.parameters.empty()) {
    quantization["parameters"] = spec.quantization.parameters;
  }
  out["quantization"] = std::move(quantization);
  nlohmann::json engine = {{"name", spec.engine.name}, {"version", spec.engine.version}};
  if (!spec.engine.runtime_cache_key.empty()) {
    engine["runtimeCacheKey"] = spec.engine.runtime_cache_key;
  }
  out["engine"] = std::move(engine);
  nlohmann::json sources = nlohmann::json::array();
  for (const ModelSource& source : spec.sources) sources.push_back(ToJson(source));
  out["sources"] = std::move(sources);
  if (spec.prestage) {
    nlohmann::json prestage = {{"nodes", spec.prestage->nodes}};
    if (!spec.prestage->node_selector.empty()) {
      prestage["nodeSelector"] = spec.prestage->node_selector;
    }
    out["prestage"] = std::move(prestage);
  }
  if (spec.retention) {
    nlohmann::json retention = nlohmann::json::object();
    if (!spec.retention->rollback_window.empty()) {
      retention["rollbackWindow"] = spec.retention->rollback_window;
    }
    out["retention"] = std::move(retention);
  }
  out["revoked"] = spec.revoked;
  if (!spec.signatures.empty()) {
    nlohmann::json signatures = nlohmann::json::array();
    for (const ModelSignature& signature : spec.signatures) {
      signatures.push_back({{"bundle", signature.bundle}});
    }
    out["signatures"] = std::move(signatures);
  }
  if (spec.base) {
    out["base"] = {{"digest", spec.base->digest}};
    if (!spec.base->name.empty()) out["base"]["name"] = spec.base->name;
  }
  return out;
}

nlohmann::json ToJson(const ModelRevisionStatus& status) {
  nlohmann::json out = nlohmann::json::object();
  if (status.observed_generation != 0) out["observedGeneration"] = status.observed_generation;
  if (!status.digest.empty()) out["digest"] = status.digest;
  out["totalBytes"] = status.total_bytes;
  if (!status.phase.empty()) out["phase"] = status.phase;
  if (!status.conditions.empty()) out["conditions"] = ConditionsToJson(status.conditions);
  out["desiredNodes"] = status.desired_nodes;
  out["stagingNodes"] = status.staging_nodes;
  out["readyNodes"] = status.ready_nodes;
  out["failedNodes"] = status.failed_nodes;
  if (status.bytes_to_ready_seconds) {
    out["bytesToReadySeconds"] = {{"p50", status.bytes_to_ready_seconds->p50},
                                  {"p95", status.bytes_to_ready_seconds->p95},
                                  {"p99", status.bytes_to_ready_seconds->p99}};
  }
  if (!status.nodes.empty()) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const NodeServing& node : status.nodes) {
      nlohmann::json item = {{"node", node.node}};
      if (!node.tier.empty()) item["tier"] = node.tier;
      if (node.bytes_to_ready_seconds) item["bytesToReadySeconds"] = *node.bytes_to_ready_seconds;
      nodes.push_back(std::move(item));
    }
    out["nodes"] = std::move(nodes);
  }
  if (!status.workloads.empty()) {
    nlohmann::json workloads = nlohmann::json::array();
    for (const WorkloadUse& use : status.workloads) {
      nlohmann::json item = {{"kind", use.kind},
                             {"name", use.name},
                             {"role", use.role},
                             {"pods", use.pods},
                             {"readyPods", use.ready_pods}};
      if (use.completed_at) item["completedAt"] = FormatTimestamp(*use.completed_at);
      workloads.push_back(std::move(item));
    }
    out["workloads"] = std::move(workloads);
  }
  if (status.fetched) {
    out["fetchedBytes"] = {{"byTier", status.fetched->by_tier},
                           {"originBytes", status.fetched->origin_bytes},
                           {"originBytesPerReplica", status.fetched->origin_bytes_per_replica}};
  }
  if (status.purge) {
    out["purge"] = {{"nodesHolding", status.purge->nodes_holding},
                    {"bytesHeld", status.purge->bytes_held},
                    {"nodes", status.purge->nodes}};
  }
  if (status.revoked_by) {
    out["revokedBy"] = {{"name", status.revoked_by->name},
                        {"reason", status.revoked_by->reason},
                        {"force", status.revoked_by->force}};
  }
  if (!status.signed_by.empty()) {
    nlohmann::json signed_by = nlohmann::json::array();
    for (const SignedBy& signature : status.signed_by) {
      nlohmann::json item = {{"signer", signature.signer}, {"publicKey", signature.public_key}};
      if (!signature.identity.empty()) item["identity"] = signature.identity;
      signed_by.push_back(std::move(item));
    }
    out["signedBy"] = std::move(signed_by);
  }
  return out;
}

nlohmann::json ToJson(const ModelRevision& revision) {
  nlohmann::json out = {{"apiVersion", kApiVersion},
                        {"kind", kModelRevisionKind},
                        {"metadata", ToJson(revision.metadata)},
                        {"spec", ToJson(revision.spec)}};
  if (revision.status) out["status"] = ToJson(*revision.status);
  return out;
}

}  // namespace modelplane::core::api
