#include "node-agent/commands/store_commands.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "node-agent/store/cache_store.h"

namespace modelplane::agent {
namespace {

struct StoreFlags {
  std::string cache_root;
  std::vector<std::string> revisions;  // verify: only these; gc: remove these first
  std::size_t threads = 4;
};

int UsageError(const char* command, const core::Error& error) {
  std::fprintf(stderr, "modelplane-node-agent %s: %s\n", command, error.ToString().c_str());
  return 2;
}

core::Result<std::vector<core::Sha256Bytes>> ParseDigests(const std::vector<std::string>& texts) {
  std::vector<core::Sha256Bytes> digests;
  for (const std::string& text : texts) {
    auto digest = core::ParseDigest(text);
    if (!digest) return std::unexpected(digest.error());
    digests.push_back(*digest);
  }
  return digests;
}

int RunVerify(const StoreFlags& flags) {
  auto store = CacheStore::Open({.root = flags.cache_root});
  if (!store) return UsageError("verify", store.error());
  auto revisions = ParseDigests(flags.revisions);
  if (!revisions) return UsageError("verify", revisions.error());
  std::vector<core::Sha256Bytes> blobs;
  if (revisions->empty()) {
    blobs = (*store)->ListBlobs();
  } else {
    for (const core::Sha256Bytes& digest : *revisions) {
      auto manifest = (*store)->FindRevision(digest);
      if (!manifest) {
        return UsageError("verify",
                          core::Error(core::ErrorCode::kNotFound,
                                      core::FormatDigest(digest) + " is not staged here"));
      }
      for (const ManifestFile& file : manifest->files) blobs.push_back(file.sha256);
    }
    std::sort(blobs.begin(), blobs.end());
    blobs.erase(std::unique(blobs.begin(), blobs.end()), blobs.end());
  }
  // Hashing is CPU-bound: a few threads read and hash different blobs at once.
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  nlohmann::json bad = nlohmann::json::array();
  std::size_t verified = 0;
  {
    std::vector<std::jthread> workers;
    for (std::size_t index = 0; index < std::max<std::size_t>(1, flags.threads); ++index) {
      workers.emplace_back([&] {
        for (std::size_t item = next++; item < blobs.size(); item = next++) {
          auto result = (*store)->VerifyBlob(blobs[item]);
          std::lock_guard lock(mutex);
          ++verified;
          if (!result) {
            bad.push_back({{"sha256", core::FormatDigest(blobs[item])},
                           {"problem", result.error().ToString()}});
          } else if (!result->ok) {
            bad.push_back({{"sha256", core::FormatDigest(blobs[item])},
                           {"problem", result->problem},
                           {"action", "moved to quarantine"}});
          }
        }
      });
    }
  }
  const nlohmann::json summary = {{"verifiedBlobs", verified}, {"bad", bad}};
  std::printf("%s\n", summary.dump(2).c_str());
  return bad.empty() ? 0 : 1;
}

int RunGc(const StoreFlags& flags) {
  auto store = CacheStore::Open({.root = flags.cache_root});
  if (!store) return UsageError("gc", store.error());
  auto revisions = ParseDigests(flags.revisions);
  if (!revisions) return UsageError("gc", revisions.error());
  for (const core::Sha256Bytes& digest : *revisions) {
    if (auto removed = (*store)->RemoveRevision(digest); !removed) {
      std::fprintf(stderr, "modelplane-node-agent gc: %s\n", removed.error().ToString().c_str());
      return 1;
    }
  }
  auto report = (*store)->CollectGarbage();
  if (!report) {
    std::fprintf(stderr, "modelplane-node-agent gc: %s\n", report.error().ToString().c_str());
    return 1;
  }
  const SpaceUsage usage = (*store)->Usage();
  const nlohmann::json summary = {{"revisionsRemoved", revisions->size()},
                                  {"blobsRemoved", report->blobs_removed},
                                  {"bytesFreed", report->bytes_freed},
                                  {"partialsRemoved", report->partials_removed},
                                  {"quarantinedRemoved", report->quarantined_removed},
                                  {"usedBytes", usage.used_bytes},
                                  {"capacityBytes", usage.capacity_bytes}};
  std::printf("%s\n", summary.dump(2).c_str());
  return 0;
}

}  // namespace

Subcommand AddVerifyCommand(CLI::App& parent) {
  auto flags = std::make_shared<StoreFlags>();
  CLI::App* app = parent.add_subcommand("verify", "Re-hash cached blobs; quarantine bad ones");
  app->add_option("--cache-root", flags->cache_root, "the cache root folder")->required();
  app->add_option("--revision", flags->revisions, "only the blobs of this revision digest");
  app->add_option("--threads", flags->threads, "blobs hashed at once (default 4)");
  return {.app = app, .run = [flags] { return RunVerify(*flags); }};
}

Subcommand AddGcCommand(CLI::App& parent) {
  auto flags = std::make_shared<StoreFlags>();
  CLI::App* app = parent.add_subcommand(
      "gc", "Remove unreferenced blobs, abandoned stagings and quarantined files");
  app->add_option("--cache-root", flags->cache_root, "the cache root folder")->required();
  app->add_option("--remove-revision", flags->revisions,
                  "drop this revision digest's manifest first, so its unshared blobs go too");
  return {.app = app, .run = [flags] { return RunGc(*flags); }};
}

}  // namespace modelplane::agent
