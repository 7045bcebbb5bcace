#include "node-agent/store/revision_view.h"

#include <map>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node-agent/store/durable_file.h"

namespace modelplane::agent {
namespace {

namespace fs = std::filesystem;

bool HasMode(const fs::path& path, unsigned mode, bool directory) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return false;
  if (directory ? !S_ISDIR(info.st_mode) : !S_ISREG(info.st_mode)) return false;
  return (info.st_mode & 07777) == mode;
}

// Every folder below `top` (not `top` itself) gets `mode`.
core::Status ChmodFoldersBelow(const fs::path& top, unsigned mode) {
  std::error_code error;
  for (fs::recursive_directory_iterator it(top, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_directory(error) && !it->is_symlink(error) &&
        ::chmod(it->path().c_str(), mode) != 0) {
      return std::unexpected(ErrnoError(errno, "setting the mode of", it->path()));
    }
  }
  if (error) {
    return core::MakeError(core::ErrorCode::kIo,
                           fmt::format("walking {}: {}", top.string(), error.message()));
  }
  return core::Ok();
}

}  // namespace

void RemoveTree(const fs::path& path) {
  std::error_code error;
  const auto status = fs::symlink_status(path, error);
  if (error || !fs::exists(status)) return;
  if (fs::is_directory(status)) {
    ::chmod(path.c_str(), 0700);
    for (fs::recursive_directory_iterator it(path, error), end; !error && it != end;
         it.increment(error)) {
      if (it->is_directory(error) && !it->is_symlink(error)) ::chmod(it->path().c_str(), 0700);
    }
  }
  fs::remove_all(path, error);
}

core::Status BuildRevisionView(const StoreLayout& layout, const RevisionManifest& manifest) {
  const fs::path target = layout.RevisionView(manifest.revision_digest);
  const fs::path building =
      layout.TemporaryDirectory() / ("view-" + core::ToHex(manifest.revision_digest));
  RemoveTree(building);
  std::error_code error;
  fs::create_directories(building, error);
  auto failed = [&](core::Error problem) -> core::Status {
    RemoveTree(building);
    return std::unexpected(std::move(problem));
  };
  if (error) {
    return failed(core::Error(core::ErrorCode::kIo,
                              fmt::format("creating {}: {}", building.string(), error.message())));
  }
  for (const ManifestFile& file : manifest.files) {
    const fs::path link = building / file.path;  // paths were validated: no "..", not absolute
    fs::create_directories(link.parent_path(), error);
    if (error) {
      return failed(core::Error(
          core::ErrorCode::kIo,
          fmt::format("building the folder view of {}: {}", file.path, error.message())));
    }
    const fs::path blob = layout.BlobPath(file.sha256);
    if (::link(blob.c_str(), link.c_str()) != 0) {
      return failed(ErrnoError(errno, "linking " + blob.string() + " as", link));
    }
    // The blob's own mode (one inode): Publish already set it; a blob found at Open may not.
    if (::chmod(link.c_str(), kViewFileMode) != 0) {
      return failed(ErrnoError(errno, "setting the mode of", link));
    }
  }
  if (auto folders = ChmodFoldersBelow(building, kViewFolderMode); !folders) {
    return failed(folders.error());
  }
  RemoveTree(target);
  // Renaming a folder to another parent needs write permission on it (its ".." changes), so
  // the top becomes read-only only once it is in place.
  if (::rename(building.c_str(), target.c_str()) != 0) {
    return failed(ErrnoError(errno, "publishing the folder view", target));
  }
  if (::chmod(target.c_str(), kViewFolderMode) != 0) {
    return std::unexpected(ErrnoError(errno, "setting the mode of", target));
  }
  return SyncDirectory(layout.ModelDirectory());
}

bool ViewMatches(const StoreLayout& layout, const RevisionManifest& manifest) {
  const fs::path view = layout.RevisionView(manifest.revision_digest);
  if (!HasMode(view, kViewFolderMode, /*directory=*/true)) return false;
  std::map<fs::path, const ManifestFile*> expected;
  for (const ManifestFile& file : manifest.files) expected.emplace(fs::path(file.path), &file);
  std::size_t matched = 0;
  std::error_code error;
  for (fs::recursive_directory_iterator it(view, error), end; !error && it != end;
       it.increment(error)) {
    const fs::path& path = it->path();
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return false;
    if (S_ISDIR(info.st_mode)) {
      if ((info.st_mode & 07777) != kViewFolderMode) return false;
      continue;
    }
    const auto file = expected.find(path.lexically_relative(view));
    if (!S_ISREG(info.st_mode) || file == expected.end()) return false;
    struct stat blob {};
    const fs::path blob_path = layout.BlobPath(file->second->sha256);
    if (::stat(blob_path.c_str(), &blob) != 0 || blob.st_ino != info.st_ino ||
        blob.st_dev != info.st_dev || (info.st_mode & 07777) != kViewFileMode) {
      return false;
    }
    ++matched;
  }
  return !error && matched == expected.size();
}

}  // namespace modelplane::agent
