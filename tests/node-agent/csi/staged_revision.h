// Puts a small revision into a real CacheStore through its public API, the way the fetch engine
// does (BeginBlob, ranges, PublishBlob, PublishRevision), for the CSI tests that mount it.
#pragma once

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "core/digest/sha256.h"
#include "node-agent/possession/possession_ledger.h"
#include "node-agent/store/cache_store.h"

namespace modelplane::agent::testing {

constexpr std::uint64_t kStageRange = 64 * 1024;

// `files`: manifest path -> content.
inline core::Status StageRevision(CacheStore& store,
                                  const std::map<std::string, std::string>& files,
                                  const core::Sha256Bytes& revision_digest, std::string name) {
  RevisionManifest manifest{.revision_digest = revision_digest, .name = std::move(name)};
  for (const auto& [path, content] : files) {
    const core::Sha256Bytes digest = core::Sha256Of(content);
    manifest.files.push_back({.path = path, .size = content.size(), .sha256 = digest});
    auto partial = store.BeginBlob(digest, content.size(), kStageRange);
    if (!partial) {
      if (partial.error().code() == core::ErrorCode::kAlreadyExists) continue;  // shared content
      return std::unexpected(partial.error());
    }
    auto hasher = core::Sha256::Create();
    void* memory = std::aligned_alloc(4096, kStageRange);
    for (std::size_t index = 0; index < (*partial)->range_count(); ++index) {
      const std::uint64_t offset = (*partial)->RangeOffset(index);
      const std::uint64_t length = (*partial)->RangeLength(index);
      std::memcpy(memory, content.data() + offset, length);
      auto written = (*partial)->WriteRange(
          index, std::span<const std::byte>(static_cast<std::byte*>(memory), length), kStageRange);
      if (written) written = (*partial)->MarkRangeDone(index);
      if (!written) {
        std::free(memory);
        return written;
      }
      hasher->Update(std::string_view(content).substr(offset, length));
    }
    std::free(memory);
    if (auto published = store.PublishBlob(std::move(*partial), hasher->Finish()); !published) {
      return published;
    }
  }
  return store.PublishRevision(manifest);
}

// Records in the store's possession ledger that revision `key`'s own sources served the bytes
// of `revision_digest`, as the agent does when a staging read them all from those sources: for
// tests that stage in the agent's place (before it starts: it reads the ledger once).
inline core::Status RecordStagedFromOwnSources(const CacheStore& store,
                                               const core::Sha256Bytes& revision_digest,
                                               const std::string& key) {
  auto ledger = PossessionLedger::Open(store.layout().PossessionLedgerPath(), nullptr);
  if (!ledger) return std::unexpected(ledger.error());
  return (*ledger)->Record(revision_digest, key);
}

}  // namespace modelplane::agent::testing
