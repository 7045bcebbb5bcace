#include "bench/extender/synthetic_fleet.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/api/revision_digest.h"

namespace modelplane::bench {
namespace {

namespace api = core::api;
using Random = std::mt19937_64;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::size_t kFamilySize = 5;
// NVMe sizes as sold (decimal TB): the cache is the node's local disk.
constexpr std::array<std::int64_t, 4> kCapacities = {1'920'000'000'000, 3'840'000'000'000,
                                                     7'680'000'000'000, 15'360'000'000'000};
constexpr std::array<const char*, 4> kNamespaces = {"models", "serving", "team-a", "team-b"};

std::string Sha256(Random& random) {
  std::string out = "sha256:";
  for (int word = 0; word < 4; ++word) out += fmt::format("{:016x}", random());
  return out;
}

std::int64_t Uniform(Random& random, std::int64_t low, std::int64_t high) {
  return std::uniform_int_distribution<std::int64_t>(low, high)(random);
}

double Fraction(Random& random) {
  return std::uniform_real_distribution<double>(0, 1)(random);
}

api::ModelFile Small(Random& random, std::string path, std::string_view role) {
  return {.path = std::move(path),
          .size = Uniform(random, 2'000, 12 * kMiB),
          .sha256 = Sha256(random),
          .role = std::string(role)};
}

// One family: version 0 is the base checkpoint; 1 and 2 keep its weights with a new config and
// index (a changed generation config, a new engine); 3 and 4 are fine-tunes that replace a
// quarter, then half, of the shards. The tokenizer is the family's.
std::vector<api::ModelRevision> MakeFamily(Random& random, std::size_t family) {
  const std::int64_t shards = Uniform(random, 4, 48);
  const std::int64_t shard_bytes = Uniform(random, 1 * kGiB, 5 * kGiB);
  std::vector<api::ModelFile> weights;
  for (std::int64_t shard = 0; shard < shards; ++shard) {
    weights.push_back({.path = fmt::format("model-{:05}-of-{:05}.safetensors", shard + 1, shards),
                       .size = shard_bytes - Uniform(random, 0, 64 * kMiB),
                       .sha256 = Sha256(random),
                       .role = std::string(api::kRoleWeights)});
  }
  const api::ModelFile tokenizer = Small(random, "tokenizer.json", api::kRoleTokenizer);
  const std::string model = fmt::format("family-{:03}", family);
  std::vector<api::ModelRevision> out;
  for (std::size_t version = 0; version < kFamilySize; ++version) {
    if (version >= 3) {
      // Each fine-tune replaces another quarter of the shards (the next quarter each time).
      const std::size_t from = (version - 3) * weights.size() / 4;
      const std::size_t to = (version - 2) * weights.size() / 4;
      for (std::size_t shard = from; shard < to; ++shard) weights[shard].sha256 = Sha256(random);
    }
    api::ModelRevision revision;
    revision.metadata.name = fmt::format("{}-r{}", model, version);
    revision.metadata.namespace_name = kNamespaces[family % kNamespaces.size()];
    revision.metadata.generation = 1;
    revision.spec.model_name = "bench/" + model;
    revision.spec.repository_revision = fmt::format("v{}", version);
    revision.spec.format = std::string(api::kFormatSafetensors);
    revision.spec.engine = {.name = "vllm", .version = "0.11.0"};
    revision.spec.sources.push_back(
        {.name = "s3",
         .type = std::string(api::kSourceObjectStore),
         .object_store = api::ObjectStoreLocation{.endpoint = "https://s3.us-east-1.amazonaws.com",
                                                  .bucket = "models",
                                                  .prefix = model + "/",
                                                  .region = "us-east-1"}});
    revision.spec.files = weights;
    revision.spec.files.push_back(Small(random, "model.safetensors.index.json", api::kRoleIndex));
    revision.spec.files.push_back(Small(random, "config.json", api::kRoleConfig));
    revision.spec.files.push_back(tokenizer);
    api::ModelRevisionStatus status;
    status.observed_generation = 1;
    // What the operator writes; a spec the digest function refuses keeps a random key.
    auto digest = api::ComputeRevisionDigest(revision.spec);
    status.digest = digest ? *digest : Sha256(random);
    for (const auto& file : revision.spec.files) status.total_bytes += file.size;
    status.phase = std::string(api::kPhaseReady);
    revision.status = std::move(status);
    out.push_back(std::move(revision));
  }
  return out;
}

api::Timestamp Now() {
  return std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now());
}

api::Timestamp Ago(std::chrono::seconds seconds) {
  return Now() - seconds;
}

// The status an agent would write for these revisions on one node: per-digest state and bytes,
// unique bytes and protection of each Ready revision, and totals consistent with them.
api::ModelCacheStatus MakeStatus(Random& random, const std::vector<const api::ModelRevision*>& held,
                                 std::string_view zone) {
  struct Entry {
    const api::ModelRevision* revision;
    std::string_view state;
  };
  std::vector<Entry> entries;
  for (const api::ModelRevision* revision : held) {
    const double roll = Fraction(random);
    const std::string_view state = roll < 0.72   ? api::kCacheStateReady
                                   : roll < 0.82 ? api::kCacheStateStaging
                                   : roll < 0.87 ? api::kCacheStatePending
                                   : roll < 0.92 ? api::kCacheStateEvicting
                                                 : api::kCacheStateFailed;
    entries.push_back({revision, state});
  }
  // Blobs the node's held or staging revisions reference, and how many of them do.
  std::map<std::string, int> references;
  std::map<std::string, std::int64_t> sizes;
  for (const Entry& entry : entries) {
    if (entry.state == api::kCacheStateFailed) continue;
    for (const auto& file : entry.revision->spec.files) {
      ++references[file.sha256];
      sizes[file.sha256] = file.size;
    }
  }

  api::ModelCacheStatus status;
  status.observed_generation = 1;
  status.zone = std::string(zone);
  status.peer_endpoint = "10.0.0.1:7070";
  std::set<std::string> stored;  // blobs on disk, each counted once
  std::int64_t staging_done = 0;
  std::int64_t reserved = 0;
  for (const Entry& entry : entries) {
    const std::int64_t total = entry.revision->status->total_bytes;
    api::CachedRevision cached;
    cached.digest = entry.revision->status->digest;
    cached.state = std::string(entry.state);
    cached.bytes_total = total;
    cached.timestamps.queued = Ago(std::chrono::seconds(Uniform(random, 3'600, 7 * 86'400)));
    if (entry.state == api::kCacheStateReady) {
      cached.bytes_done = total;
      cached.source_tier =
          std::string(Fraction(random) < 0.6 ? api::kTierPeer : api::kTierObjectStore);
      cached.timestamps.first_byte = cached.timestamps.queued;
      cached.timestamps.last_byte = cached.timestamps.queued;
      cached.timestamps.verified = cached.timestamps.queued;
      cached.timestamps.published = cached.timestamps.queued;
      cached.bytes_by_tier[cached.source_tier] = total;
      const double use = Fraction(random);
      if (use < 0.35) {
        cached.last_used = Ago(std::chrono::seconds(Uniform(random, 0, 3'000)));
      } else if (use < 0.7) {
        cached.last_used = Ago(std::chrono::seconds(Uniform(random, 4'000, 2 * 86'400)));
      }
      const double protect = Fraction(random);
      if (cached.last_used && *cached.last_used > Ago(std::chrono::seconds(600))) {
        cached.protection.push_back(std::string(api::kProtectionInUse));
      } else if (protect < 0.15) {
        cached.protection.push_back(std::string(api::kProtectionWanted));
      } else if (protect < 0.2) {
        cached.protection.push_back(std::string(api::kProtectionPinned));
      }
      for (const auto& file : entry.revision->spec.files) {
        stored.insert(file.sha256);
        if (references[file.sha256] == 1) cached.unique_bytes += file.size;
      }
    } else if (entry.state == api::kCacheStateStaging) {
      cached.bytes_done = static_cast<std::int64_t>(Fraction(random) * static_cast<double>(total));
      cached.source_tier = std::string(api::kTierPeer);
      cached.timestamps.first_byte = cached.timestamps.queued;
      cached.protection.push_back(std::string(api::kProtectionReserved));
      staging_done += cached.bytes_done;
      reserved += total - cached.bytes_done;
    } else if (entry.state == api::kCacheStatePending) {
      cached.protection.push_back(std::string(api::kProtectionReserved));
      reserved += total;
    } else if (entry.state == api::kCacheStateEvicting) {
      cached.bytes_done = total / 2;
      cached.reason = std::string(api::kCacheReasonHighWatermark);
      cached.message = "evicting to get below the high watermark";
      staging_done += cached.bytes_done;
    } else {
      cached.reason = std::string(api::kCacheReasonSourceUnavailable);
      cached.message = "source s3 answered 503 SlowDown for model-00003-of-00012.safetensors";
    }
    status.revisions.push_back(std::move(cached));
  }
  std::int64_t used = staging_done;
  for (const std::string& blob : stored) used += sizes[blob];
  // The smallest disk that holds it, then 0-2 sizes up: some nodes are tight, most have room.
  std::size_t tier = 0;
  while (tier + 1 < kCapacities.size() && kCapacities[tier] < used + reserved) ++tier;
  tier = std::min(kCapacities.size() - 1, tier + static_cast<std::size_t>(Uniform(random, 0, 2)));
  status.capacity_bytes = kCapacities[tier];
  status.used_bytes = used;
  status.reserved_bytes = reserved;
  status.high_watermark_bytes = status.capacity_bytes / 100 * 85;
  status.low_watermark_bytes = status.capacity_bytes / 100 * 70;
  status.media_bandwidth_bytes_per_second = 6 * kGiB;
  for (const api::CachedRevision& cached : status.revisions) {
    if (cached.protection.empty() && cached.state == api::kCacheStateReady) {
      status.reclaimable_bytes += cached.unique_bytes;
    } else if (cached.state == api::kCacheStateReady) {
      status.protected_bytes += cached.unique_bytes;
    }
  }
  status.conditions.push_back({.type = "Ready", .status = "True", .reason = "AgentReporting"});
  return status;
}

}  // namespace

SyntheticFleet MakeSyntheticFleet(const FleetShape& shape) {
  Random random(shape.seed);
  SyntheticFleet fleet;
  const std::size_t families = std::max<std::size_t>(1, shape.revisions / kFamilySize);
  for (std::size_t family = 0; family < families; ++family) {
    for (auto& revision : MakeFamily(random, family)) {
      // Zipf-like over families (a few models run everywhere), newer versions more wanted.
      const double version = static_cast<double>(fleet.revisions.size() % kFamilySize);
      fleet.popularity.push_back((1.0 + version / 2) /
                                 std::pow(static_cast<double>(family) + 1, 0.9));
      fleet.revisions.push_back(std::move(revision));
    }
  }
  // One revoked revision: a pod naming it fails on every node, with a reason per node.
  if (fleet.revisions.size() > 7 * kFamilySize)
    fleet.revisions[7 * kFamilySize + 4].spec.revoked = true;

  std::discrete_distribution<std::size_t> pick(fleet.popularity.begin(), fleet.popularity.end());
  for (std::size_t node = 0; node < shape.nodes; ++node) {
    const std::string name = fmt::format("gpu-node-{}", node);
    fleet.node_names.push_back(name);
    if (Fraction(random) < shape.nodes_without_cache) continue;
    api::ModelCache cache;
    cache.metadata.name = name;
    cache.metadata.generation = 1;
    if (Fraction(random) >= shape.caches_without_status) {
      const auto count =
          static_cast<std::size_t>(Uniform(random, static_cast<std::int64_t>(shape.min_held),
                                           static_cast<std::int64_t>(shape.max_held)));
      std::set<std::size_t> chosen;
      while (chosen.size() < std::min(count, fleet.revisions.size())) chosen.insert(pick(random));
      std::vector<const api::ModelRevision*> held;
      for (std::size_t index : chosen) held.push_back(&fleet.revisions[index]);
      std::shuffle(held.begin(), held.end(), random);
      cache.status = MakeStatus(random, held,
                                node % 3 == 0   ? "zone-a"
                                : node % 3 == 1 ? "zone-b"
                                                : "zone-c");
    }
    fleet.caches.push_back(std::move(cache));
  }
  return fleet;
}

}  // namespace modelplane::bench
