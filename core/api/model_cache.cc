#include "core/api/model_cache.h"

#include <chrono>
#include <utility>

#include "core/api/limits.h"
#include "core/api/model_revision.h"
#include "core/json/json_object_reader.h"

namespace modelplane::core::api {
namespace {

Result<RevisionReference> ReferenceFromJson(const JsonObjectReader& reader) {
  RevisionReference ref;
  MODELPLANE_JSON_TRY(reader.String("namespace", ref.namespace_name, 63, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("name", ref.name, 253, Presence::kRequired));
  return ref;
}

Result<PeerSource> PeerFromJson(const JsonObjectReader& reader) {
  PeerSource peer;
  MODELPLANE_JSON_TRY(reader.String("node", peer.node, 253, Presence::kRequired));
  MODELPLANE_JSON_TRY(
      reader.String("endpoint", peer.endpoint, kMaxShortString, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("zone", peer.zone, 63));
  MODELPLANE_JSON_TRY(reader.String("state", peer.state, kMaxEnumLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.StringList("files", peer.files, kMaxPeerFiles, kMaxDigestLength));
  return peer;
}

Result<Holding> HoldingFromJson(const JsonObjectReader& reader) {
  Holding holding;
  MODELPLANE_JSON_TRY(
      reader.String("digest", holding.digest, kMaxDigestLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.Bool("peerInZone", holding.peer_in_zone));
  MODELPLANE_JSON_TRY(reader.Bool("peerElsewhere", holding.peer_elsewhere));
  MODELPLANE_JSON_TRY(reader.Bool("revoked", holding.revoked));
  MODELPLANE_JSON_TRY(reader.Bool("forcePurge", holding.force_purge));
  return holding;
}

Result<DesiredRevision> DesiredFromJson(const JsonObjectReader& reader) {
  DesiredRevision desired;
  MODELPLANE_JSON_TRY(
      reader.RequiredObject<RevisionReference>("revision", desired.revision, ReferenceFromJson));
  MODELPLANE_JSON_TRY(
      reader.String("digest", desired.digest, kMaxDigestLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.Bool("pinned", desired.pinned));
  MODELPLANE_JSON_TRY(reader.String("reason", desired.reason, kMaxEnumLength));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "pinnedUntil", desired.pinned_until));
  MODELPLANE_JSON_TRY(
      reader.ObjectArray<PeerSource>("peers", desired.peers, kMaxRevisionPeers, PeerFromJson));
  MODELPLANE_JSON_TRY(reader.String("peerTicket", desired.peer_ticket, kMaxPeerTicketLength));
  MODELPLANE_JSON_TRY(reader.Bool("sourcesProven", desired.sources_proven));
  return desired;
}

Result<StreamGrant> GrantFromJson(const JsonObjectReader& reader) {
  StreamGrant grant;
  MODELPLANE_JSON_TRY(
      reader.String("source", grant.source, kMaxSourceIdentityLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.Int32("streams", grant.streams, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.Int64("bytesPerSecond", grant.bytes_per_second));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "expiresAt", grant.expires_at));
  return grant;
}

Result<ModelCacheSpec> CacheSpecFromReader(const JsonObjectReader& reader) {
  ModelCacheSpec spec;
  MODELPLANE_JSON_TRY(reader.ObjectArray<DesiredRevision>("revisions", spec.revisions,
                                                          kMaxCacheRevisions, DesiredFromJson));
  MODELPLANE_JSON_TRY(
      reader.ObjectArray<StreamGrant>("grants", spec.grants, kMaxCacheGrants, GrantFromJson));
  MODELPLANE_JSON_TRY(
      reader.ObjectArray<Holding>("holdings", spec.holdings, kMaxCacheRevisions, HoldingFromJson));
  MODELPLANE_JSON_TRY(reader.Int32("progressIntervalSeconds", spec.progress_interval_seconds));
  return spec;
}

Result<SourceTelemetry> TelemetryFromJson(const JsonObjectReader& reader) {
  SourceTelemetry telemetry;
  MODELPLANE_JSON_TRY(
      reader.String("source", telemetry.source, kMaxSourceIdentityLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("tier", telemetry.tier, kMaxEnumLength));
  MODELPLANE_JSON_TRY(reader.Int32("windowSeconds", telemetry.window_seconds));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "windowEnd", telemetry.window_end));
  MODELPLANE_JSON_TRY(reader.Int64("bytesPerSecond", telemetry.bytes_per_second));
  MODELPLANE_JSON_TRY(reader.Int32("peakStreams", telemetry.peak_streams));
  MODELPLANE_JSON_TRY(reader.Int64("requestsOk", telemetry.requests_ok));
  MODELPLANE_JSON_TRY(reader.Int64("requestsThrottled", telemetry.requests_throttled));
  MODELPLANE_JSON_TRY(reader.Int64("requestsFailed", telemetry.requests_failed));
  MODELPLANE_JSON_TRY(reader.Int64("requestsTimedOut", telemetry.requests_timed_out));
  MODELPLANE_JSON_TRY(reader.Int64("ttfbMilliseconds", telemetry.ttfb_milliseconds));
  MODELPLANE_JSON_TRY(reader.Int32("grantedStreams", telemetry.granted_streams));
  return telemetry;
}

Result<StageTimestamps> TimestampsFromJson(const JsonObjectReader& reader) {
  StageTimestamps stamps;
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "queued", stamps.queued));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "firstByte", stamps.first_byte));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "lastByte", stamps.last_byte));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "verified", stamps.verified));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "published", stamps.published));
  return stamps;
}

Result<SourceProof> ProofFromJson(const JsonObjectReader& reader) {
  SourceProof proof;
  MODELPLANE_JSON_TRY(
      reader.RequiredObject<RevisionReference>("revision", proof.revision, ReferenceFromJson));
  MODELPLANE_JSON_TRY(reader.String("state", proof.state, kMaxEnumLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("reason", proof.reason, kMaxEnumLength));
  MODELPLANE_JSON_TRY(reader.String("message", proof.message, 1024));
  return proof;
}

Result<CachedRevision> CachedFromJson(const JsonObjectReader& reader) {
  CachedRevision cached;
  MODELPLANE_JSON_TRY(
      reader.String("digest", cached.digest, kMaxDigestLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("state", cached.state, kMaxEnumLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.Int64("bytesDone", cached.bytes_done));
  MODELPLANE_JSON_TRY(reader.Int64("bytesTotal", cached.bytes_total));
  MODELPLANE_JSON_TRY(reader.String("sourceTier", cached.source_tier, kMaxEnumLength));
  std::optional<StageTimestamps> stamps;
  MODELPLANE_JSON_TRY(reader.Object<StageTimestamps>("timestamps", stamps, TimestampsFromJson));
  cached.timestamps = stamps.value_or(StageTimestamps{});
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "lastUsed", cached.last_used));
  MODELPLANE_JSON_TRY(reader.String("message", cached.message, 4096));
  MODELPLANE_JSON_TRY(reader.String("reason", cached.reason, kMaxEnumLength));
  MODELPLANE_JSON_TRY(reader.Int64("uniqueBytes", cached.unique_bytes));
  MODELPLANE_JSON_TRY(reader.StringList("protection", cached.protection, 8, kMaxEnumLength));
  MODELPLANE_JSON_TRY(
      reader.Int64Map("bytesByTier", cached.bytes_by_tier, kMaxTiers, kMaxMapKeyLength));
  MODELPLANE_JSON_TRY(reader.Int64("goodputBytesPerSecond", cached.goodput_bytes_per_second));
  MODELPLANE_JSON_TRY(reader.Int64("expectedFinishSeconds", cached.expected_finish_seconds));
  MODELPLANE_JSON_TRY(reader.ObjectArray<SourceProof>("sourceProofs", cached.source_proofs,
                                                      kMaxSourceProofs, ProofFromJson));
  return cached;
}

Result<ModelCacheStatus> CacheStatusFromReader(const JsonObjectReader& reader) {
  ModelCacheStatus status;
  MODELPLANE_JSON_TRY(reader.Int64("observedGeneration", status.observed_generation));
  MODELPLANE_JSON_TRY(reader.Int64("capacityBytes", status.capacity_bytes));
  MODELPLANE_JSON_TRY(reader.Int64("usedBytes", status.used_bytes));
  MODELPLANE_JSON_TRY(reader.Int64("reservedBytes", status.reserved_bytes));
  MODELPLANE_JSON_TRY(
      reader.Int64("mediaBandwidthBytesPerSecond", status.media_bandwidth_bytes_per_second));
  MODELPLANE_JSON_TRY(reader.String("peerEndpoint", status.peer_endpoint, 512));
  MODELPLANE_JSON_TRY(reader.String("zone", status.zone, 63));
  MODELPLANE_JSON_TRY(reader.Int64("highWatermarkBytes", status.high_watermark_bytes));
  MODELPLANE_JSON_TRY(reader.Int64("lowWatermarkBytes", status.low_watermark_bytes));
  MODELPLANE_JSON_TRY(reader.Int64("reclaimableBytes", status.reclaimable_bytes));
  MODELPLANE_JSON_TRY(reader.Int64("protectedBytes", status.protected_bytes));
  MODELPLANE_JSON_TRY(ReadConditions(reader, status.conditions));
  MODELPLANE_JSON_TRY(reader.ObjectArray<CachedRevision>("revisions", status.revisions,
                                                         kMaxCacheRevisions, CachedFromJson));
  MODELPLANE_JSON_TRY(reader.ObjectArray<SourceTelemetry>("sources", status.sources,
                                                          kMaxCacheSources, TelemetryFromJson));
  return status;
}

void SetTime(nlohmann::json& out, std::string_view key, const std::optional<Timestamp>& time) {
  if (time) out[std::string(key)] = FormatTimestamp(*time);
}

}  // namespace

Result<ModelCache> ModelCacheFromJson(const nlohmann::json& value) {
  auto reader = JsonObjectReader::Create(value, "");
  if (!reader) return std::unexpected(reader.error());
  ModelCache cache;
  auto meta = ReadTypeAndObjectMeta(*reader, kApiVersion, kModelCacheKind);
  if (!meta) return std::unexpected(meta.error());
  cache.metadata = std::move(*meta);
  std::optional<ModelCacheSpec> spec;
  MODELPLANE_JSON_TRY(reader->Object<ModelCacheSpec>("spec", spec, CacheSpecFromReader));
  cache.spec = spec.value_or(ModelCacheSpec{});
  MODELPLANE_JSON_TRY(
      reader->Object<ModelCacheStatus>("status", cache.status, CacheStatusFromReader));
  return cache;
}

Result<ModelCache> ParseModelCache(std::string_view json_text, const JsonLimits& limits) {
  auto document = ParseJsonDocument(json_text, limits);
  if (!document) return std::unexpected(document.error());
  return ModelCacheFromJson(*document);
}

nlohmann::json ToJson(const ModelCacheSpec& spec) {
  nlohmann::json revisions = nlohmann::json::array();
  for (const DesiredRevision& desired : spec.revisions) {
    nlohmann::json item = {
        {"revision",
         {{"namespace", desired.revision.namespace_name}, {"name", desired.revision.name}}},
        {"digest", desired.digest},
        {"pinned", desired.pinned}};
    if (!desired.reason.empty()) item["reason"] = desired.reason;
    SetTime(item, "pinnedUntil", desired.pinned_until);
    if (!desired.peers.empty()) item["peers"] = PeersToJson(desired.peers);
    if (!desired.peer_ticket.empty()) item["peerTicket"] = desired.peer_ticket;
    if (desired.sources_proven) item["sourcesProven"] = true;
    revisions.push_back(std::move(item));
  }
  nlohmann::json out = {{"revisions", std::move(revisions)}};
  if (!spec.grants.empty()) out["grants"] = GrantsToJson(spec.grants);
  if (!spec.holdings.empty()) out["holdings"] = HoldingsToJson(spec.holdings);
  if (spec.progress_interval_seconds) {
    out["progressIntervalSeconds"] = *spec.progress_interval_seconds;
  }
  return out;
}

nlohmann::json PeersToJson(const std::vector<PeerSource>& peers) {
  nlohmann::json out = nlohmann::json::array();
  for (const PeerSource& peer : peers) {
    nlohmann::json item = {{"node", peer.node}, {"endpoint", peer.endpoint}, {"state", peer.state}};
    if (!peer.zone.empty()) item["zone"] = peer.zone;
    if (!peer.files.empty()) item["files"] = peer.files;
    out.push_back(std::move(item));
  }
  return out;
}

nlohmann::json HoldingsToJson(const std::vector<Holding>& holdings) {
  nlohmann::json out = nlohmann::json::array();
  for (const Holding& holding : holdings) {
    out.push_back({{"digest", holding.digest},
                   {"peerInZone", holding.peer_in_zone},
                   {"peerElsewhere", holding.peer_elsewhere},
                   {"revoked", holding.revoked},
                   {"forcePurge", holding.force_purge}});
  }
  return out;
}

nlohmann::json GrantsToJson(const std::vector<StreamGrant>& grants) {
  nlohmann::json out = nlohmann::json::array();
  for (const StreamGrant& grant : grants) {
    nlohmann::json item = {{"source", grant.source},
                           {"streams", grant.streams},
                           {"expiresAt", FormatTimestamp(grant.expires_at)}};
    if (grant.bytes_per_second) item["bytesPerSecond"] = *grant.bytes_per_second;
    out.push_back(std::move(item));
  }
  return out;
}

nlohmann::json ToJson(const ModelCacheStatus& status) {
  nlohmann::json out = {{"capacityBytes", status.capacity_bytes},
                        {"usedBytes", status.used_bytes},
                        {"reservedBytes", status.reserved_bytes},
                        {"mediaBandwidthBytesPerSecond", status.media_bandwidth_bytes_per_second}};
  if (status.observed_generation != 0) out["observedGeneration"] = status.observed_generation;
  if (!status.peer_endpoint.empty()) out["peerEndpoint"] = status.peer_endpoint;
  if (!status.zone.empty()) out["zone"] = status.zone;
  // Written only by agents that evict: an older agent's status has none of them.
  if (status.high_watermark_bytes != 0) {
    out["highWatermarkBytes"] = status.high_watermark_bytes;
    out["lowWatermarkBytes"] = status.low_watermark_bytes;
    out["reclaimableBytes"] = status.reclaimable_bytes;
    out["protectedBytes"] = status.protected_bytes;
  }
  if (!status.conditions.empty()) out["conditions"] = ConditionsToJson(status.conditions);
  if (!status.revisions.empty()) {
    nlohmann::json revisions = nlohmann::json::array();
    for (const CachedRevision& cached : status.revisions) {
      nlohmann::json item = {{"digest", cached.digest},
                             {"state", cached.state},
                             {"bytesDone", cached.bytes_done},
                             {"bytesTotal", cached.bytes_total}};
      if (!cached.source_tier.empty()) item["sourceTier"] = cached.source_tier;
      nlohmann::json stamps = nlohmann::json::object();
      SetTime(stamps, "queued", cached.timestamps.queued);
      SetTime(stamps, "firstByte", cached.timestamps.first_byte);
      SetTime(stamps, "lastByte", cached.timestamps.last_byte);
      SetTime(stamps, "verified", cached.timestamps.verified);
      SetTime(stamps, "published", cached.timestamps.published);
      if (!stamps.empty()) item["timestamps"] = std::move(stamps);
      SetTime(item, "lastUsed", cached.last_used);
      if (!cached.message.empty()) item["message"] = cached.message;
      if (!cached.reason.empty()) item["reason"] = cached.reason;
      if (cached.unique_bytes != 0) item["uniqueBytes"] = cached.unique_bytes;
      if (!cached.protection.empty()) item["protection"] = cached.protection;
      if (!cached.bytes_by_tier.empty()) item["bytesByTier"] = cached.bytes_by_tier;
      if (cached.goodput_bytes_per_second) {
        item["goodputBytesPerSecond"] = *cached.goodput_bytes_per_second;
      }
      if (cached.expected_finish_seconds) {
        item["expectedFinishSeconds"] = *cached.expected_finish_seconds;
      }
      if (!cached.source_proofs.empty()) {
        nlohmann::json proofs = nlohmann::json::array();
        for (const SourceProof& proof : cached.source_proofs) {
          nlohmann::json one = {
              {"revision",
               {{"namespace", proof.revision.namespace_name}, {"name", proof.revision.name}}},
              {"state", proof.state}};
          if (!proof.reason.empty()) one["reason"] = proof.reason;
          if (!proof.message.empty()) one["message"] = proof.message;
          proofs.push_back(std::move(one));
        }
        item["sourceProofs"] = std::move(proofs);
      }
      revisions.push_back(std::move(item));
    }
    out["revisions"] = std::move(revisions);
  }
  if (!status.sources.empty()) {
    nlohmann::json sources = nlohmann::json::array();
    for (const SourceTelemetry& source : status.sources) {
      sources.push_back({{"source", source.source},
                         {"tier", source.tier},
                         {"windowSeconds", source.window_seconds},
                         {"windowEnd", FormatTimestamp(source.window_end)},
                         {"bytesPerSecond", source.bytes_per_second},
                         {"peakStreams", source.peak_streams},
                         {"requestsOk", source.requests_ok},
                         {"requestsThrottled", source.requests_throttled},
                         {"requestsFailed", source.requests_failed},
                         {"requestsTimedOut", source.requests_timed_out},
                         {"ttfbMilliseconds", source.ttfb_milliseconds},
                         {"grantedStreams", source.granted_streams}});
    }
    out["sources"] = std::move(sources);
  }
  return out;
}

nlohmann::json ToJson(const ModelCache& cache) {
  nlohmann::json out = {{"apiVersion", kApiVersion},
                        {"kind", kModelCacheKind},
                        {"metadata", ToJson(cache.metadata)},
                        {"spec", ToJson(cache.spec)}};
  if (cache.status) out["status"] = ToJson(*cache.status);
  return out;
}

std::optional<double> BytesToReadySeconds(const CachedRevision& cached) {
  const auto& stamps = cached.timestamps;
  if (!stamps.queued || !stamps.published || *stamps.published < *stamps.queued) {
    return std::nullopt;
  }
  return std::chrono::duration<double>(*stamps.published - *stamps.queued).count();
}

}  // namespace modelplane::core::api
