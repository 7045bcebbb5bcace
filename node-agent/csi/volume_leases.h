// In-use leases of the CSI plugin: one per published volume (a revision view bind-mounted at a
// pod's target path). Eviction must not remove a revision any lease names (InUseDigests).
//
// Leases outlive the agent: each is a small JSON record, <cache root>/csi/volumes/<hex>.json
// where <hex> is the sha256 of the target path (a target holds one mount, and kubelet's volume
// ids are free-form strings). The plugin writes a record (durably) BEFORE it mounts and removes
// it AFTER it unmounts, so after a crash a record may name a target that is not mounted (dropped
// when the plugin starts and compares with the mount table), but a mount never lacks a record.
//
// Thread safety: every method may be called from any thread. Put and Drop of one target must
// not race each other (the plugin serialises them); queries may run at any time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/digest/sha256.h"
#include "core/error/error.h"

namespace modelplane::agent {

struct VolumeLease {
  std::string volume_id;  // empty for a mount adopted from the mount table without a record
  std::string target_path;
  core::Sha256Bytes revision_digest{};
  std::string revision;  // "namespace/name", for people reading logs and records
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;
  std::int64_t published_unix_seconds = 0;

  friend bool operator==(const VolumeLease&, const VolumeLease&) = default;
};

[[nodiscard]] std::string SerializeLease(const VolumeLease& lease);
// Strict: kDataLoss for anything the plugin would not have written.
[[nodiscard]] core::Result<VolumeLease> ParseLease(std::string_view text);

class VolumeLeases {
 public:
  struct OpenReport {
    std::size_t loaded = 0;
    std::size_t removed_unreadable = 0;  // not JSON, wrong fields, or filed under another name
  };

  // Creates the folder if needed and loads every record in it.
  [[nodiscard]] static core::Result<std::unique_ptr<VolumeLeases>> Open(
      std::filesystem::path directory);
  VolumeLeases(const VolumeLeases&) = delete;
  VolumeLeases& operator=(const VolumeLeases&) = delete;

  [[nodiscard]] const OpenReport& report() const { return report_; }
  [[nodiscard]] const std::filesystem::path& directory() const { return directory_; }

  // Writes the record durably, then holds it; replaces a lease at the same target.
  [[nodiscard]] core::Status Put(const VolumeLease& lease);
  // Removes the record and the lease; no lease at the target is success.
  [[nodiscard]] core::Status Drop(const std::string& target_path);

  [[nodiscard]] std::optional<VolumeLease> AtTarget(const std::string& target_path) const;
  [[nodiscard]] std::vector<VolumeLease> OfVolume(std::string_view volume_id) const;
  [[nodiscard]] std::vector<VolumeLease> List() const;
  // The revisions mounted on this node: what eviction must keep.
  [[nodiscard]] std::set<core::Sha256Bytes> InUseDigests() const;

  // The record's path for a target.
  [[nodiscard]] std::filesystem::path RecordPath(const std::string& target_path) const;

 private:
  explicit VolumeLeases(std::filesystem::path directory) : directory_(std::move(directory)) {}

  const std::filesystem::path directory_;
  OpenReport report_;
  mutable std::mutex mutex_;
  std::map<std::string, VolumeLease> by_target_;
};

}  // namespace modelplane::agent
