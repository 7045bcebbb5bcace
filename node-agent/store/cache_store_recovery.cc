// What CacheStore::Open finds under its root and repairs. Whatever a crash, an older layout or
// a hand left there, recovery ends with a store whose invariants hold (cache_store.h) and never
// throws: an entry it cannot use is moved to quarantine (blobs) or removed (the rest).
#include <fmt/format.h>

#include "core/io/bounded_file.h"
#include "node-agent/store/cache_store.h"
#include "node-agent/store/durable_file.h"
#include "node-agent/store/revision_view.h"
#include "node-agent/store/store_files.h"

namespace modelplane::agent {
namespace {

constexpr std::size_t kManifestSizeLimit = 64 << 20;

}  // namespace

core::Status CacheStore::Recover() {
  std::uint64_t used = 0;
  for (const auto& path : ListFolder(layout_.BlobDirectory())) {
    const auto digest = DigestFromName(path.filename().string());
    const auto size = RegularFileSize(path);
    if (!digest || !size) {
      // Not something Publish writes (a stray file, a folder, a symlink): moved aside, never
      // served.
      (void)Quarantine(path, digest.value_or(core::Sha256Bytes{}));
      continue;
    }
    blobs_.emplace(*digest, *size);
    used += *size;
  }
  ledger_.AddUsed(used);
  recovery_.blobs = blobs_.size();

  if (auto revisions = RecoverRevisions(); !revisions) return revisions;
  // Views of revisions that are not (or no longer) ready go, and so does anything in the models
  // folder that is not a view.
  for (const auto& path : ListFolder(layout_.ModelDirectory())) {
    const auto digest = DigestFromName(path.filename().string());
    if (!digest || !revisions_.contains(*digest)) RemovePath(path);
  }
  RecoverTemporaryFiles();
  return core::Ok();
}

core::Status CacheStore::RecoverRevisions() {
  for (const auto& path : ListFolder(layout_.RevisionDirectory())) {
    const std::string name = path.filename().string();
    if (!name.ends_with(".json") || !RegularFileSize(path)) {
      RemovePath(path);  // an interrupted WriteFileDurably, or a folder where a file belongs
      if (name.ends_with(".json")) ++recovery_.dropped_revisions;
      continue;
    }
    auto text = core::ReadBoundedFile(path.string(), kManifestSizeLimit);
    auto manifest =
        text ? ParseManifest(*text) : core::Result<RevisionManifest>(std::unexpected(text.error()));
    bool complete =
        manifest.has_value() && core::ToHex(manifest->revision_digest) + ".json" == name;
    if (complete) complete = AllBlobsPublished(*manifest);
    if (!complete) {
      RemovePath(path);
      ++recovery_.dropped_revisions;
      continue;
    }
    ++recovery_.revisions;
    // A crash between the view and the manifest, a view damaged by hand or one of the older
    // symlink layout: rebuild it. A view that is right is kept (pods may have it mounted).
    if (auto view = WriteRevisionView(*manifest); !view) return view;
    revisions_.emplace(manifest->revision_digest, std::move(*manifest));
  }
  return core::Ok();
}

void CacheStore::RecoverTemporaryFiles() {
  for (const auto& path : ListFolder(layout_.TemporaryDirectory())) {
    const std::string name = path.filename().string();
    if (name.ends_with(".partial")) {
      const auto digest = DigestFromName(name.substr(0, name.size() - 8));
      const auto size = RegularFileSize(path);
      const bool has_progress =
          digest && RegularFileSize(layout_.ProgressPath(*digest)).has_value();
      if (digest && size && has_progress && !blobs_.contains(*digest)) {
        auto reservation = ledger_.Reserve(*size);
        if (reservation) {
          if (IsFullyAllocated(path, *size)) reservation->MarkOnDisk();
          recovered_partials_.emplace(*digest, std::move(*reservation));
          ++recovery_.resumable_partials;
          continue;
        }
      }
      RemovePath(path);
      if (digest) RemovePath(layout_.ProgressPath(*digest));
      ++recovery_.dropped_partials;
    } else if (name.ends_with(".progress")) {
      const auto digest = DigestFromName(name.substr(0, name.size() - 9));
      if (!digest || !RegularFileSize(layout_.PartialPath(*digest))) RemovePath(path);
    } else {
      // Anything else, such as a folder view left half built (tmp/view-<hex>) by a crash.
      RemovePath(path);
    }
  }
}

}  // namespace modelplane::agent
