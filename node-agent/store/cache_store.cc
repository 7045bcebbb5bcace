// Open, blobs and their publication. Recovery, revisions and collection are in the files named
// after them (cache_store.h says which).
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
#include "node-agent/store/store_files.h"

namespace modelplane::agent {
namespace {

// Quarantined files are evidence for a person to look at, not a second cache: keep a few.
constexpr std::size_t kQuarantineKeep = 4;

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
              [root = options_.root] { return FilesystemAvailable(root); }),
      preallocate_(!IsMemoryFilesystem(options_.root)) {}

CacheStore::~CacheStore() = default;

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

std::map<core::Sha256Bytes, std::uint64_t> CacheStore::BlobSizes() const {
  std::lock_guard lock(mutex_);
  return blobs_;
}

std::uint64_t CacheStore::BytesToStage(const std::vector<ManifestFile>& files) const {
  std::lock_guard lock(mutex_);
  std::set<core::Sha256Bytes> seen;
  std::uint64_t bytes = 0;
  for (const ManifestFile& file : files) {
    if (!seen.insert(file.sha256).second || blobs_.contains(file.sha256)) continue;
    std::uint64_t held = 0;
    if (auto recovered = recovered_partials_.find(file.sha256);
        recovered != recovered_partials_.end()) {
      held = recovered->second.bytes();
    }
    bytes += file.size > held ? file.size - held : 0;
  }
  return bytes;
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
                                 .allow_direct_io = options_.allow_direct_io,
                                 .preallocate = preallocate_},
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
    // The message reaches tenant-readable status: it names what was expected, never the digest
    // of what was read (that would tell a revision's author the sha256 of any file a source
    // can reach). The fetch engine logs the computed digest for the node's operator.
    return std::unexpected(core::Error(
        core::ErrorCode::kDataLoss,
        fmt::format("the bytes staged for {} do not match that sha256; moved to quarantine",
                    core::FormatDigest(digest)),
        false));
  }
  if (auto finished = partial->Finish(); !finished) {
    partial->Discard();
    end_staging();
    return finished;
  }
  const auto staged_size = RegularFileSize(partial->path());
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

core::Status CacheStore::Quarantine(const std::filesystem::path& path,
                                    const core::Sha256Bytes& digest) {
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  const auto target =
      layout_.QuarantineDirectory() / fmt::format("{}.{}", core::ToHex(digest), nanos);
  if (::rename(path.c_str(), target.c_str()) != 0) {
    const core::Error error = ErrnoError(errno, "quarantining", path);
    RemovePath(path);
    return std::unexpected(error);
  }
  auto entries = ListFolder(layout_.QuarantineDirectory());
  std::sort(entries.begin(), entries.end(), [](const auto& left, const auto& right) {
    std::error_code error;
    return std::filesystem::last_write_time(left, error) >
           std::filesystem::last_write_time(right, error);
  });
  for (std::size_t index = kQuarantineKeep; index < entries.size(); ++index) {
    RemovePath(entries[index]);
  }
  return core::Ok();
}

}  // namespace modelplane::agent
