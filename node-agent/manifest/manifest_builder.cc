#include "node-agent/manifest/manifest_builder.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/api/model_revision_validation.h"
#include "core/digest/sha256.h"
#include "core/io/unique_fd.h"
#include "core/manifest/file_roles.h"

namespace modelplane::agent {
namespace {

namespace fs = std::filesystem;
using core::Error;
using core::ErrorCode;
using core::MakeError;

// Runs `hash(i)` for i in [0, count) on at most `threads` threads; the first error wins and
// stops the others from starting new items.
core::Status ForEachParallel(std::size_t count, std::size_t threads,
                             const std::function<core::Status(std::size_t)>& hash) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::optional<Error> first_error;
  const auto worker = [&] {
    while (!failed.load()) {
      const std::size_t index = next.fetch_add(1);
      if (index >= count) return;
      if (auto status = hash(index); !status) {
        std::lock_guard lock(mutex);
        if (!first_error) first_error = status.error();
        failed.store(true);
      }
    }
  };
  std::vector<std::jthread> pool;
  const std::size_t used = std::max<std::size_t>(1, std::min(threads, count));
  for (std::size_t i = 0; i + 1 < used; ++i) pool.emplace_back(worker);
  worker();
  pool.clear();
  if (first_error) return std::unexpected(*first_error);
  return core::Ok();
}

core::Result<core::Sha256Bytes> HashFile(const fs::path& path, std::uint64_t expected_size,
                                         std::size_t read_size) {
  // O_NOFOLLOW: the walk already resolved symlinks; a path swapped for one since is refused.
  core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) {
    return MakeError(ErrorCode::kIo, fmt::format("opening {}: {}", path.string(),
                                                 std::system_category().message(errno)));
  }
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  auto hasher = core::Sha256::Create();
  if (!hasher) return std::unexpected(hasher.error());
  std::vector<std::byte> buffer(read_size);
  std::uint64_t total = 0;
  while (true) {
    const ssize_t got = ::read(fd.get(), buffer.data(), buffer.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      return MakeError(ErrorCode::kIo, fmt::format("reading {}: {}", path.string(),
                                                   std::system_category().message(errno)));
    }
    if (got == 0) break;
    hasher->Update(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(got)));
    total += static_cast<std::uint64_t>(got);
  }
  if (total != expected_size) {
    return MakeError(ErrorCode::kDataLoss,
                     fmt::format("{} changed while hashed: {} bytes, listed with {}", path.string(),
                                 total, expected_size));
  }
  return hasher->Finish();
}

bool IsBelow(const fs::path& candidate, const fs::path& root) {
  const auto [root_end, unused] =
      std::mismatch(root.begin(), root.end(), candidate.begin(), candidate.end());
  (void)unused;
  return root_end == root.end();
}

core::Status CheckPath(const std::string& path) {
  if (const std::string problem = core::api::CheckRelativePath(path); !problem.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("file path \"{}\" cannot go in a manifest: {}", path, problem));
  }
  return core::Ok();
}

}  // namespace

core::Result<FileListing> ListFolderFiles(const std::string& folder, const HashOptions& options) {
  std::error_code error;
  const fs::path root = fs::canonical(folder, error);
  if (error || !fs::is_directory(root, error)) {
    return MakeError(ErrorCode::kNotFound, fmt::format("{} is not a folder", folder));
  }
  struct Pending {
    std::string relative;
    fs::path real;  // what gets read: the file, or a symlink's target inside the folder
    std::uint64_t size = 0;
    std::string role;
  };
  std::vector<Pending> pending;
  FileListing listing;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, error);
  if (error) {
    return MakeError(ErrorCode::kIo, fmt::format("listing {}: {}", folder, error.message()));
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error) {
      return MakeError(ErrorCode::kIo, fmt::format("listing {}: {}", folder, error.message()));
    }
    const fs::directory_entry& entry = *it;
    const std::string relative = entry.path().lexically_relative(root).generic_string();
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name.front() == '.') {
      // Hidden files and folders (.git, .cache) are tooling, not model files.
      if (entry.is_directory(error) && !entry.is_symlink(error)) it.disable_recursion_pending();
      listing.skipped.push_back(relative);
      continue;
    }
    fs::path real = entry.path();
    if (entry.is_symlink(error)) {
      const fs::path target = fs::canonical(entry.path(), error);
      if (error || !IsBelow(target, root)) {
        return MakeError(ErrorCode::kPermissionDenied,
                         fmt::format("{} is a symlink that leaves {}", relative, folder));
      }
      if (!fs::is_regular_file(target, error)) {
        return MakeError(ErrorCode::kPermissionDenied,
                         fmt::format("{} is a symlink to something other than a file", relative));
      }
      real = target;
    } else if (entry.is_directory(error)) {
      continue;
    } else if (!entry.is_regular_file(error)) {
      listing.skipped.push_back(relative);
      continue;
    }
    const std::optional<std::string> role = core::RoleForPath(relative);
    if (!role) {
      listing.skipped.push_back(relative);
      continue;
    }
    if (auto checked = CheckPath(relative); !checked) return std::unexpected(checked.error());
    const std::uint64_t size = fs::file_size(real, error);
    if (error) {
      return MakeError(ErrorCode::kIo, fmt::format("{}: {}", relative, error.message()));
    }
    pending.push_back({relative, real, size, *role});
  }

  // Largest first, so one big shard does not start last and leave the other threads idle.
  std::vector<std::size_t> order(pending.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return pending[a].size > pending[b].size; });
  std::vector<core::Sha256Bytes> digests(pending.size());
  auto hashed =
      ForEachParallel(pending.size(), options.threads, [&](std::size_t i) -> core::Status {
        const Pending& file = pending[order[i]];
        auto digest = HashFile(file.real, file.size, options.read_size);
        if (!digest) return std::unexpected(digest.error());
        digests[order[i]] = *digest;
        return core::Ok();
      });
  if (!hashed) return std::unexpected(hashed.error());

  for (std::size_t i = 0; i < pending.size(); ++i) {
    listing.files.push_back({.path = pending[i].relative,
                             .size = static_cast<std::int64_t>(pending[i].size),
                             .sha256 = core::FormatDigest(digests[i]),
                             .role = pending[i].role});
  }
  std::sort(listing.files.begin(), listing.files.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  std::sort(listing.skipped.begin(), listing.skipped.end());
  return listing;
}

core::Result<FileListing> ListS3Files(S3Client& client, const std::string& bucket,
                                      const std::string& prefix, const HashOptions& options) {
  std::string key_prefix = prefix;
  while (!key_prefix.empty() && key_prefix.back() == '/') key_prefix.pop_back();
  if (!key_prefix.empty()) key_prefix.push_back('/');
  auto objects = client.ListAllObjects(bucket, key_prefix);
  if (!objects) return std::unexpected(objects.error());

  FileListing listing;
  std::vector<S3Object> pending;
  std::vector<std::string> roles;
  for (S3Object& object : *objects) {
    std::string relative = object.key.substr(key_prefix.size());
    if (relative.empty() || relative.back() == '/') continue;  // folder markers
    const auto role = core::RoleForPath(relative);
    bool hidden = false;
    for (std::size_t at = 0; at != std::string::npos;) {
      hidden = hidden || relative[at] == '.';
      at = relative.find('/', at);
      if (at != std::string::npos) ++at;
    }
    if (!role || hidden) {
      listing.skipped.push_back(relative);
      continue;
    }
    if (auto checked = CheckPath(relative); !checked) return std::unexpected(checked.error());
    roles.push_back(*role);
    pending.push_back(std::move(object));
  }
  std::vector<core::Sha256Bytes> digests(pending.size());
  auto hashed =
      ForEachParallel(pending.size(), options.threads, [&](std::size_t i) -> core::Status {
        auto hasher = core::Sha256::Create();
        if (!hasher) return std::unexpected(hasher.error());
        auto received =
            client.GetObject(bucket, pending[i].key, [&](std::span<const std::byte> data) {
              hasher->Update(data);
              return core::Ok();
            });
        if (!received) return std::unexpected(received.error());
        if (*received != pending[i].size) {
          return MakeError(ErrorCode::kDataLoss,
                           fmt::format("{}/{}: {} bytes arrived, listed with {}", bucket,
                                       pending[i].key, *received, pending[i].size));
        }
        digests[i] = hasher->Finish();
        return core::Ok();
      });
  if (!hashed) return std::unexpected(hashed.error());
  for (std::size_t i = 0; i < pending.size(); ++i) {
    listing.files.push_back({.path = pending[i].key.substr(key_prefix.size()),
                             .size = static_cast<std::int64_t>(pending[i].size),
                             .sha256 = core::FormatDigest(digests[i]),
                             .role = roles[i]});
  }
  std::sort(listing.files.begin(), listing.files.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  std::sort(listing.skipped.begin(), listing.skipped.end());
  return listing;
}

}  // namespace modelplane::agent
