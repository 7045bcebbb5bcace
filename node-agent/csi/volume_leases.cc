#include "node-agent/csi/volume_leases.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/io/bounded_file.h"
#include "core/json/json_document.h"
#include "node-agent/store/durable_file.h"

namespace modelplane::agent {
namespace {

constexpr std::size_t kRecordSizeLimit = 64 << 10;
constexpr std::size_t kFieldLimit = 4096;
// More than a node can mount; a folder with more records is not one the plugin wrote.
constexpr std::size_t kMaxRecords = 100'000;

core::Error Malformed(std::string_view what) {
  return core::Error(core::ErrorCode::kDataLoss, fmt::format("volume lease record: {}", what),
                     false);
}

// Reads an optional string field; false when present but not a bounded string.
bool ReadString(const nlohmann::json& object, const char* key, std::string& out) {
  const auto field = object.find(key);
  if (field == object.end()) return true;
  if (!field->is_string()) return false;
  out = field->get<std::string>();
  return out.size() <= kFieldLimit;
}

}  // namespace

std::string SerializeLease(const VolumeLease& lease) {
  const nlohmann::json document = {
      {"volumeId", lease.volume_id},
      {"targetPath", lease.target_path},
      {"revisionDigest", core::FormatDigest(lease.revision_digest)},
      {"revision", lease.revision},
      {"pod",
       {{"namespace", lease.pod_namespace}, {"name", lease.pod_name}, {"uid", lease.pod_uid}}},
      {"publishedUnixSeconds", lease.published_unix_seconds}};
  return document.dump(1) + "\n";
}

core::Result<VolumeLease> ParseLease(std::string_view text) {
  auto parsed_document = core::ParseJsonDocument(text, {.max_bytes = kRecordSizeLimit});
  if (!parsed_document) return std::unexpected(Malformed(parsed_document.error().message()));
  const nlohmann::json& document = *parsed_document;
  if (!document.is_object()) {
    return std::unexpected(Malformed("not a JSON object"));
  }
  VolumeLease lease;
  std::string digest;
  if (!ReadString(document, "volumeId", lease.volume_id) ||
      !ReadString(document, "targetPath", lease.target_path) ||
      !ReadString(document, "revisionDigest", digest) ||
      !ReadString(document, "revision", lease.revision)) {
    return std::unexpected(Malformed("a field is not a string"));
  }
  if (lease.target_path.empty() || lease.target_path.front() != '/') {
    return std::unexpected(Malformed("targetPath is not an absolute path"));
  }
  auto parsed = core::ParseDigest(digest);
  if (!parsed) return std::unexpected(Malformed("revisionDigest is malformed"));
  lease.revision_digest = *parsed;
  if (const auto pod = document.find("pod"); pod != document.end()) {
    if (!pod->is_object() || !ReadString(*pod, "namespace", lease.pod_namespace) ||
        !ReadString(*pod, "name", lease.pod_name) || !ReadString(*pod, "uid", lease.pod_uid)) {
      return std::unexpected(Malformed("pod is malformed"));
    }
  }
  if (const auto published = document.find("publishedUnixSeconds"); published != document.end()) {
    if (!published->is_number_integer()) {
      return std::unexpected(Malformed("publishedUnixSeconds is not an integer"));
    }
    lease.published_unix_seconds = published->get<std::int64_t>();
  }
  return lease;
}

std::filesystem::path VolumeLeases::RecordPath(const std::string& target_path) const {
  return directory_ / (core::ToHex(core::Sha256Of(target_path)) + ".json");
}

core::Result<std::unique_ptr<VolumeLeases>> VolumeLeases::Open(std::filesystem::path directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    return core::MakeError(core::ErrorCode::kIo,
                           fmt::format("creating {}: {}", directory.string(), error.message()));
  }
  std::unique_ptr<VolumeLeases> leases(new VolumeLeases(std::move(directory)));
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(leases->directory_, error)) {
    paths.push_back(entry.path());
    if (paths.size() > kMaxRecords) {
      return core::MakeError(
          core::ErrorCode::kResourceExhausted,
          fmt::format("{} holds more than {} records", leases->directory_.string(), kMaxRecords));
    }
  }
  if (error) {
    return core::MakeError(
        core::ErrorCode::kIo,
        fmt::format("listing {}: {}", leases->directory_.string(), error.message()));
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    auto text = core::ReadBoundedFile(path.string(), kRecordSizeLimit);
    auto lease =
        text ? ParseLease(*text) : core::Result<VolumeLease>(std::unexpected(text.error()));
    // A record filed under another target's name, an interrupted write (".<name>.<random>.tmp")
    // or anything else the plugin would not have left: it cannot protect a mount, so it goes.
    if (!lease || leases->RecordPath(lease->target_path) != path) {
      ::unlink(path.c_str());
      ++leases->report_.removed_unreadable;
      continue;
    }
    leases->by_target_.emplace(lease->target_path, std::move(*lease));
    ++leases->report_.loaded;
  }
  return leases;
}

core::Status VolumeLeases::Put(const VolumeLease& lease) {
  if (auto written = WriteFileDurably(RecordPath(lease.target_path), SerializeLease(lease));
      !written) {
    return written;
  }
  std::lock_guard lock(mutex_);
  by_target_.insert_or_assign(lease.target_path, lease);
  return core::Ok();
}

core::Status VolumeLeases::Drop(const std::string& target_path) {
  const auto path = RecordPath(target_path);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return std::unexpected(ErrnoError(errno, "removing the lease record", path));
  }
  if (auto synced = SyncDirectory(directory_); !synced) return synced;
  std::lock_guard lock(mutex_);
  by_target_.erase(target_path);
  return core::Ok();
}

std::optional<VolumeLease> VolumeLeases::AtTarget(const std::string& target_path) const {
  std::lock_guard lock(mutex_);
  const auto found = by_target_.find(target_path);
  if (found == by_target_.end()) return std::nullopt;
  return found->second;
}

std::vector<VolumeLease> VolumeLeases::OfVolume(std::string_view volume_id) const {
  std::lock_guard lock(mutex_);
  std::vector<VolumeLease> result;
  for (const auto& [target, lease] : by_target_) {
    if (lease.volume_id == volume_id) result.push_back(lease);
  }
  return result;
}

std::vector<VolumeLease> VolumeLeases::List() const {
  std::lock_guard lock(mutex_);
  std::vector<VolumeLease> result;
  result.reserve(by_target_.size());
  for (const auto& [target, lease] : by_target_) result.push_back(lease);
  return result;
}

std::set<core::Sha256Bytes> VolumeLeases::InUseDigests() const {
  std::lock_guard lock(mutex_);
  std::set<core::Sha256Bytes> digests;
  for (const auto& [target, lease] : by_target_) digests.insert(lease.revision_digest);
  return digests;
}

}  // namespace modelplane::agent
