// Doubles for the CSI plugin's two seams: a resolver answering from a table (the daemon's is the
// NodeController over real informers, tested on the local control plane) and a mounter that
// records what it was asked and keeps a mount table of its own (the real one is tested as root
// in csi_plugin_root_test.cc).
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/api/object_key.h"
#include "node-agent/csi/mounter.h"
#include "node-agent/csi/revision_resolver.h"

namespace modelplane::agent::testing {

class TableResolver final : public RevisionResolver {
 public:
  void Set(const std::string& namespace_name, const std::string& name, RevisionStatus status) {
    std::lock_guard lock(mutex_);
    table_[core::api::ObjectKey(namespace_name, name)] = std::move(status);
  }
  void SetSynced(bool synced) {
    std::lock_guard lock(mutex_);
    synced_ = synced;
  }
  [[nodiscard]] RevisionStatus ResolveRevision(std::string_view namespace_name,
                                               std::string_view name) const override {
    std::lock_guard lock(mutex_);
    const auto found = table_.find(core::api::ObjectKey(namespace_name, name));
    if (found == table_.end()) return RevisionStatus{.problem = "not found"};
    return found->second;
  }
  [[nodiscard]] bool RevisionsSynced() const override {
    std::lock_guard lock(mutex_);
    return synced_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, RevisionStatus> table_;
  bool synced_ = true;
};

class RecordingMounter final : public Mounter {
 public:
  core::Status BindReadOnly(const std::filesystem::path& source,
                            const std::filesystem::path& target) override {
    std::lock_guard lock(mutex_);
    ++binds_;
    if (fail_next_bind_) {
      fail_next_bind_ = false;
      return core::MakeError(core::ErrorCode::kPermissionDenied, "mount: operation not permitted");
    }
    mounts_.push_back({.mount_id = next_id_++,
                       .root = source.string(),
                       .mount_point = target.string(),
                       .options = "ro,nosuid,nodev"});
    return core::Ok();
  }
  core::Status Unmount(const std::filesystem::path& target) override {
    std::lock_guard lock(mutex_);
    ++unmounts_;
    std::erase_if(mounts_, [&](const MountEntry& entry) { return entry.mount_point == target; });
    return core::Ok();
  }
  core::Result<std::vector<MountEntry>> Mounts() const override {
    std::lock_guard lock(mutex_);
    return mounts_;
  }

  // A mount made behind the plugin's back (another tool, or before a restart).
  void AddMount(const std::string& root, const std::string& mount_point) {
    std::lock_guard lock(mutex_);
    mounts_.push_back({.mount_id = next_id_++, .root = root, .mount_point = mount_point});
  }
  void FailNextBind() {
    std::lock_guard lock(mutex_);
    fail_next_bind_ = true;
  }
  [[nodiscard]] int binds() const {
    std::lock_guard lock(mutex_);
    return binds_;
  }
  [[nodiscard]] std::vector<MountEntry> mounts() const {
    std::lock_guard lock(mutex_);
    return mounts_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<MountEntry> mounts_;
  int next_id_ = 1000;
  int binds_ = 0;
  int unmounts_ = 0;
  bool fail_next_bind_ = false;
};

}  // namespace modelplane::agent::testing
