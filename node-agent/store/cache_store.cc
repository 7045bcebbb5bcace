#include "node-agent/store/cache_store.h"

#include <algorithm>
#include <chrono>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "node-agent/store/durable_file.h"

namespace modelplane::agent {
namespace {

constexpr std::size_t kManifestSizeLimit = 64 << 20;
// Quarantined files are evidence for a person to look at, not a second cache: keep a few.
constexpr std::size_t kQuarantineKeep = 4;

std::optional<core::Sha256Bytes> DigestFromName(std::string_view name) {
  if (name.size() != 64) return std::nullopt;
  auto digest = core::ParseDigest(name, /*allow_bare=*/true);
  if (!digest || core::ToHex(*digest) != name) return std::nullopt;
  return *digest;
}

core::Result<std::uint64_t> FilesystemSize(const std::filesystem::path& root) {
  struct statvfs info {};
  if (::statvfs(root.c_str(), &info) != 0)
    return std::unexpected(ErrnoError(errno, "inspecting", root));
  return static_cast<std::uint64_t>(info.f_blocks) * info.f_frsize;
}

std::uint64_t FilesystemAvailable(const std::filesystem::path& root) {
  struct statvfs info {};
  if (::statvfs(root.c_str(), &info) != 0) return 0;
  return static_cast<std::uint64_t>(info.f_bavail) * info.f_frsize;
}

// Whether the filesystem holds blocks for all `size` bytes (a preallocated staging), or the
// file is sparse and writing it would still take space.
bool IsFullyAllocated(const std::filesystem::path& path, std::uint64_t size) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 &&
         static_cast<std::uint64_t>(info.st_blocks) * 512 >= size;
}

std::optional<std::uint64_t> FileSize(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(info.st_size);
}

std::vector<std::filesystem::path> ListFolder(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> entries;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    entries.push_back(entry.path());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace

core::Result<std::unique_ptr<CacheStore>> CacheStore::Open(CacheStoreOptions options) {
  const StoreLayout layout(options.root);
  for (const auto& folder :
       {layout.BlobDirectory(), layout.RevisionDirectory(), layout.TemporaryDirectory(),
        layout.QuarantineDirectory(), layout.ModelDirectory()}) {
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    if (error) {
      return core::MakeError(core::ErrorCode::kIo, fmt::format("creating cache folder {}: {}",
                                                               folder.string(), error.message()));
    }
  }
  core::UniqueFd lock(::open(layout.LockFile().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!lock.valid()) return std::unexpected(ErrnoError(errno, "opening", layout.LockFile()));
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return std::unexpected(core::Error(
          core::ErrorCode::kConflict,
          fmt::format("cache root {} is in use by another process (flock on {} is held)",
                      options.root.string(), layout.LockFile().string()),
          false));
    }
    return std::unexpected(ErrnoError(errno, "locking", layout.LockFile()));
  }
  std::uint64_t capacity = options.capacity_bytes;
  if (capacity == 0) {
    auto size = FilesystemSize(options.root);
    if (!size) return std::unexpected(size.error());
    capacity = *size;
  }
  std::unique_ptr<CacheStore> store(new CacheStore(std::move(options), std::move(lock), capacity));
  if (auto recovered = store->Recover(); !recovered) return std::unexpected(recovered.error());
  return store;
}

CacheStore::CacheStore(CacheStoreOptions options, core::UniqueFd lock, std::uint64_t capacity)
    : options_(std::move(options)),
      layout_(options_.root),
      lock_(std::move(lock)),
      ledger_(capacity, options_.headroom_bytes,
              [root = options_.root] { return FilesystemAvailable(root); }) {}

CacheStore::~CacheStore() = default;

core::Status CacheStore::Recover() {
  std::uint64_t used = 0;
  for (const auto& path : ListFolder(layout_.BlobDirectory())) {
    const auto digest = DigestFromName(path.filename().string());
    const auto size = FileSize(path);
    if (!digest || !size) {
      // Not something Publish writes: a stray file is moved aside, never served.
      (void)Quarantine(path, digest.value_or(core::Sha256Bytes{}));
      continue;
    }
    blobs_.emplace(*digest, *size);
    used += *size;
  }
  ledger_.AddUsed(used);
  recovery_.blobs = blobs_.size();

  for (const auto& path : ListFolder(layout_.RevisionDirectory())) {
    const std::string name = path.filename().string();
    if (!name.ends_with(".json")) {
      std::filesystem::remove(path);  // an interrupted WriteFileDurably
      continue;
    }
    auto text = ReadSmallFile(path, kManifestSizeLimit);
    auto manifest =
        text ? ParseManifest(*text) : core::Result<RevisionManifest>(std::unexpected(text.error()));
    bool complete =
        manifest.has_value() && core::ToHex(manifest->revision_digest) + ".json" == name;
    if (complete) {
      for (const ManifestFile& file : manifest->files) {
        auto blob = blobs_.find(file.sha256);
        if (blob == blobs_.end() || blob->second != file.size) complete = false;
      }
    }
    if (complete) {
      ++recovery_.revisions;
      // A crash between the view and the manifest, or a view damaged by hand: rebuild it.
      if (auto view = WriteRevisionView(*manifest); !view) return view;
      revisions_.emplace(manifest->revision_digest, std::move(*manifest));
    } else {
      std::filesystem::remove(path);
      ++recovery_.dropped_revisions;
    }
  }
  // Views of revisions that are not (or no longer) ready go.
  for (const auto& path : ListFolder(layout_.ModelDirectory())) {
    const auto digest = DigestFromName(path.filename().string());
    if (!digest || !std::filesystem::exists(layout_.RevisionPath(*digest))) {
      std::error_code error;
      std::filesystem::remove_all(path, error);
    }
  }

  for (const auto& path : ListFolder(layout_.TemporaryDirectory())) {
    const std::string name = path.filename().string();
    if (name.ends_with(".partial")) {
      const auto digest = DigestFromName(name.substr(0, name.size() - 8));
      const auto size = FileSize(path);
      const bool has_progress = digest && FileSize(layout_.ProgressPath(*digest)).has_value();
      if (digest && size && has_progress && !blobs_.contains(*digest)) {
        auto reservation = ledger_.Reserve(*size);
        if (reservation) {
          if (IsFullyAllocated(path, *size)) reservation->MarkOnDisk();
          recovered_partials_.emplace(*digest, std::move(*reservation));
          ++recovery_.resumable_partials;
          continue;
        }
      }
      std::filesystem::remove(path);
      if (digest) std::filesystem::remove(layout_.ProgressPath(*digest));
      ++recovery_.dropped_partials;
    } else if (name.ends_with(".progress")) {
      const auto digest = DigestFromName(name.substr(0, name.size() - 9));
      if (!digest || !FileSize(layout_.PartialPath(*digest))) std::filesystem::remove(path);
    } else {
      std::filesystem::remove(path);
    }
  }
  return core::Ok();
}

std::optional<VerifiedBlob> CacheStore::FindVerifiedBlob(const core::Sha256Bytes& digest) const {
  std::lock_guard lock(mutex_);
  const auto blob = blobs_.find(digest);
  if (blob == blobs_.end()) return std::nullopt;
  return VerifiedBlob{.path = layout_.BlobPath(digest), .size = blob->second};
}

bool CacheStore::HasBlob(const core::Sha256Bytes& digest) const {
  std::lock_guard lock(mutex_);
  return blobs_.contains(digest);
}

core::Result<std::unique_ptr<PartialBlob>> CacheStore::BeginBlob(const core::Sha256Bytes& digest,
                                                                 std::uint64_t size,
                                                                 std::uint64_t range_size) {
  // Under the lock, so two fetches cannot both start staging one blob.
  std::lock_guard lock(mutex_);
  if (blobs_.contains(digest)) {
    return core::MakeError(core::ErrorCode::kAlreadyExists,
                           fmt::format("blob {} is already published", core::FormatDigest(digest)));
  }
  if (staging_.contains(digest)) {
    return std::unexpected(core::Error(
        core::ErrorCode::kConflict,
        fmt::format("blob {} is being staged by another fetch", core::FormatDigest(digest)), true));
  }
  Reservation reservation;
  if (auto recovered = recovered_partials_.find(digest); recovered != recovered_partials_.end()) {
    reservation = std::move(recovered->second);
    recovered_partials_.erase(recovered);
  }
  if (reservation.bytes() < size) {
    reservation.Release();
    auto reserved = ledger_.Reserve(size);
    if (!reserved) return std::unexpected(reserved.error());
    reservation = std::move(*reserved);
  }
  auto partial =
      PartialBlob::OpenOrResume(layout_.PartialPath(digest), layout_.ProgressPath(digest),
                                {.digest = digest,
                                 .size = size,
                                 .range_size = range_size,
                                 .allow_direct_io = options_.allow_direct_io},
                                std::move(reservation));
  if (!partial) return std::unexpected(partial.error());
  staging_.insert(digest);
  return partial;
}

core::Status CacheStore::PublishBlob(std::unique_ptr<PartialBlob> partial,
                                     const core::Sha256Bytes& computed) {
  const core::Sha256Bytes digest = partial->digest();
  const std::uint64_t size = partial->size();
  auto end_staging = [&] {
    std::lock_guard lock(mutex_);
    staging_.erase(digest);
  };
  if (computed != digest) {
    (void)partial->Finish();
    (void)Quarantine(partial->path(), digest);
    partial->Discard();
    end_staging();
    return std::unexpected(
        core::Error(core::ErrorCode::kDataLoss,
                    fmt::format("the bytes staged for {} hash to {}; moved to quarantine",
                                core::FormatDigest(digest), core::FormatDigest(computed)),
                    false));
  }
  if (auto finished = partial->Finish(); !finished) {
    partial->Discard();
    end_staging();
    return finished;
  }
  const auto staged_size = FileSize(partial->path());
  if (!staged_size || *staged_size != size) {
    partial->Discard();
    end_staging();
    return core::MakeError(
        core::ErrorCode::kDataLoss,
        fmt::format("staged file for {} has the wrong size", core::FormatDigest(digest)));
  }
  const std::filesystem::path target = layout_.BlobPath(digest);
  ::chmod(partial->path().c_str(), 0444);
  if (::rename(partial->path().c_str(), target.c_str()) != 0) {
    const core::Error error = ErrnoError(errno, "publishing", target);
    partial->Discard();
    end_staging();
    return std::unexpected(error);
  }
  if (auto synced = SyncDirectory(layout_.BlobDirectory()); !synced) {
    partial->Discard();
    end_staging();
    return synced;
  }
  Reservation reservation = partial->TakeReservation();
  std::lock_guard lock(mutex_);
  // The reservation may be larger than the blob (it was taken for a recovered partial).
  const std::uint64_t reserved = reservation.bytes();
  reservation.Commit();
  if (reserved > size) ledger_.RemoveUsed(reserved - size);
  if (reserved < size) ledger_.AddUsed(size - reserved);
  blobs_.emplace(digest, size);
  staging_.erase(digest);
  return core::Ok();
}

void CacheStore::AbandonBlob(std::unique_ptr<PartialBlob> partial) {
  const core::Sha256Bytes digest = partial->digest();
  partial->Discard();
  std::lock_guard lock(mutex_);
  staging_.erase(digest);
}

void CacheStore::SuspendBlob(std::unique_ptr<PartialBlob> partial) {
  const core::Sha256Bytes digest = partial->digest();
  const std::uint64_t size = partial->size();
  Reservation reservation = partial->TakeReservation();
  partial.reset();
  std::lock_guard lock(mutex_);
  // The files stay on disk, so their space stays reserved for whoever resumes them.
  if (reservation.bytes() >= size) recovered_partials_[digest] = std::move(reservation);
  staging_.erase(digest);
}

core::Status CacheStore::PublishRevision(const RevisionManifest& manifest) {
  {
    std::lock_guard lock(mutex_);
    for (const ManifestFile& file : manifest.files) {
      auto blob = blobs_.find(file.sha256);
      if (blob == blobs_.end() || blob->second != file.size) {
        return core::MakeError(core::ErrorCode::kInternal,
                               fmt::format("revision {} names {} ({}), which is not published",
                                           core::FormatDigest(manifest.revision_digest), file.path,
                                           core::FormatDigest(file.sha256)));
      }
    }
  }
  if (auto view = WriteRevisionView(manifest); !view) return view;
  if (auto written = WriteFileDurably(layout_.RevisionPath(manifest.revision_digest),
                                      SerializeManifest(manifest));
      !written) {
    return written;
  }
  std::lock_guard lock(mutex_);
  revisions_.insert_or_assign(manifest.revision_digest, manifest);
  return core::Ok();
}

core::Status CacheStore::WriteRevisionView(const RevisionManifest& manifest) {
  // Built aside and renamed into place, so a loader never sees half a folder.
  const auto target = layout_.RevisionView(manifest.revision_digest);
  const auto building =
      layout_.TemporaryDirectory() / ("view-" + core::ToHex(manifest.revision_digest));
  std::error_code error;
  std::filesystem::remove_all(building, error);
  for (const ManifestFile& file : manifest.files) {
    const auto link = building / file.path;  // paths were validated: no "..", not absolute
    std::filesystem::create_directories(link.parent_path(), error);
    if (!error) std::filesystem::create_symlink(layout_.BlobPath(file.sha256), link, error);
    if (error) {
      std::filesystem::remove_all(building, error);
      return core::MakeError(core::ErrorCode::kIo, fmt::format("building the folder view of {}: {}",
                                                               file.path, error.message()));
    }
  }
  std::filesystem::create_directories(building, error);
  std::filesystem::remove_all(target, error);
  if (::rename(building.c_str(), target.c_str()) != 0) {
    return std::unexpected(ErrnoError(errno, "publishing the folder view", target));
  }
  return SyncDirectory(layout_.ModelDirectory());
}

void CacheStore::RemoveRevisionView(const core::Sha256Bytes& revision_digest) {
  std::error_code error;
  std::filesystem::remove_all(layout_.RevisionView(revision_digest), error);
}

std::optional<RevisionManifest> CacheStore::FindRevision(
    const core::Sha256Bytes& revision_digest) const {
  std::lock_guard lock(mutex_);
  auto found = revisions_.find(revision_digest);
  if (found == revisions_.end() || !AllBlobsPublished(found->second)) return std::nullopt;
  return found->second;
}

std::vector<RevisionManifest> CacheStore::ListRevisions() const {
  std::lock_guard lock(mutex_);
  std::vector<RevisionManifest> revisions;
  for (const auto& [digest, manifest] : revisions_) {
    if (AllBlobsPublished(manifest)) revisions.push_back(manifest);
  }
  return revisions;
}

bool CacheStore::AllBlobsPublished(const RevisionManifest& manifest) const {
  return std::ranges::all_of(manifest.files, [&](const ManifestFile& file) {
    auto blob = blobs_.find(file.sha256);
    return blob != blobs_.end() && blob->second == file.size;
  });
}

core::Status CacheStore::RemoveRevision(const core::Sha256Bytes& revision_digest) {
  const auto path = layout_.RevisionPath(revision_digest);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return std::unexpected(ErrnoError(errno, "removing", path));
  }
  RemoveRevisionView(revision_digest);
  {
    std::lock_guard lock(mutex_);
    revisions_.erase(revision_digest);
  }
  return SyncDirectory(layout_.RevisionDirectory());
}

core::Result<GarbageReport> CacheStore::CollectGarbage(
    const std::set<core::Sha256Bytes>& keep_blobs) {
  std::set<core::Sha256Bytes> referenced = keep_blobs;
  for (const RevisionManifest& manifest : ListRevisions()) {
    for (const ManifestFile& file : manifest.files) referenced.insert(file.sha256);
  }
  GarbageReport report;
  std::vector<std::pair<core::Sha256Bytes, std::uint64_t>> victims;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [digest, size] : blobs_) {
      if (!referenced.contains(digest)) victims.emplace_back(digest, size);
    }
    for (const auto& [digest, size] : victims) blobs_.erase(digest);
  }
  for (const auto& [digest, size] : victims) {
    const auto path = layout_.BlobPath(digest);
    if (::unlink(path.c_str()) == 0 || errno == ENOENT) {
      ledger_.RemoveUsed(size);
      ++report.blobs_removed;
      report.bytes_freed += size;
    }
  }
  {
    std::lock_guard lock(mutex_);
    for (auto it = recovered_partials_.begin(); it != recovered_partials_.end();) {
      if (keep_blobs.contains(it->first)) {
        ++it;
        continue;
      }
      std::filesystem::remove(layout_.PartialPath(it->first));
      std::filesystem::remove(layout_.ProgressPath(it->first));
      ++report.partials_removed;
      it = recovered_partials_.erase(it);
    }
  }
  for (const auto& path : ListFolder(layout_.QuarantineDirectory())) {
    std::error_code error;
    if (std::filesystem::remove(path, error)) ++report.quarantined_removed;
  }
  if (auto synced = SyncDirectory(layout_.BlobDirectory()); !synced) {
    return std::unexpected(synced.error());
  }
  return report;
}

core::Result<BlobVerification> CacheStore::VerifyBlob(const core::Sha256Bytes& digest) {
  const auto found = FindVerifiedBlob(digest);
  if (!found) {
    return core::MakeError(core::ErrorCode::kNotFound,
                           fmt::format("blob {} is not in the cache", core::FormatDigest(digest)));
  }
  BlobVerification result{.digest = digest};
  auto computed = core::Sha256OfFile(found->path.string());
  if (computed && *computed == digest && FileSize(found->path) == found->size) {
    result.ok = true;
    return result;
  }
  result.problem = computed ? fmt::format("content hashes to {}", core::FormatDigest(*computed))
                            : computed.error().ToString();
  {
    std::lock_guard lock(mutex_);
    blobs_.erase(digest);
  }
  ledger_.RemoveUsed(found->size);
  DropRevisionsNaming(digest);
  (void)Quarantine(found->path, digest);
  return result;
}

std::vector<core::Sha256Bytes> CacheStore::ListBlobs() const {
  std::lock_guard lock(mutex_);
  std::vector<core::Sha256Bytes> digests;
  digests.reserve(blobs_.size());
  for (const auto& [digest, size] : blobs_) digests.push_back(digest);
  return digests;
}

void CacheStore::DropRevisionsNaming(const core::Sha256Bytes& blob) {
  std::vector<core::Sha256Bytes> naming;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [digest, manifest] : revisions_) {
      if (std::ranges::any_of(manifest.files,
                              [&](const ManifestFile& file) { return file.sha256 == blob; })) {
        naming.push_back(digest);
      }
    }
  }
  for (const core::Sha256Bytes& digest : naming) {
    std::filesystem::remove(layout_.RevisionPath(digest));
    RemoveRevisionView(digest);
    std::lock_guard lock(mutex_);
    revisions_.erase(digest);
  }
}

core::Status CacheStore::Quarantine(const std::filesystem::path& path,
                                    const core::Sha256Bytes& digest) {
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  const auto target =
      layout_.QuarantineDirectory() / fmt::format("{}.{}", core::ToHex(digest), nanos);
  if (::rename(path.c_str(), target.c_str()) != 0) {
    const core::Error error = ErrnoError(errno, "quarantining", path);
    std::filesystem::remove(path);
    return std::unexpected(error);
  }
  auto entries = ListFolder(layout_.QuarantineDirectory());
  std::sort(entries.begin(), entries.end(), [](const auto& left, const auto& right) {
    std::error_code error;
    return std::filesystem::last_write_time(left, error) >
           std::filesystem::last_write_time(right, error);
  });
  for (std::size_t index = kQuarantineKeep; index < entries.size(); ++index) {
    std::filesystem::remove(entries[index]);
  }
  return core::Ok();
}

}  // namespace modelplane::agent
