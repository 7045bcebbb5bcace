#include "node-agent/csi/volume_publisher.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/api/object_key.h"
#include "node-agent/csi/target_path.h"
#include "node-agent/store/durable_file.h"

namespace modelplane::agent {
namespace {

namespace fs = std::filesystem;

// The mount table shows resolved paths; kubelet's may go through a symlinked root folder.
fs::path Canonical(const fs::path& path) {
  std::error_code error;
  fs::path canonical = fs::weakly_canonical(path, error);
  return error ? path : canonical;
}

// The revision digest when `mount` is a bind mount of a store view (its root ends in
// "models/<64 hex>"), whatever filesystem the cache lives on.
std::optional<core::Sha256Bytes> ViewDigestOf(const MountEntry& mount) {
  const fs::path root(mount.root);
  const std::string name = root.filename().string();
  if (name.size() != 64 || root.parent_path().filename() != "models") return std::nullopt;
  auto digest = core::ParseDigest(name, /*allow_bare=*/true);
  if (!digest || core::ToHex(*digest) != name) return std::nullopt;
  return *digest;
}

std::string PodOf(const VolumeLease& lease) {
  return core::api::ObjectKey(lease.pod_namespace, lease.pod_name);
}

}  // namespace

VolumePublisher::VolumePublisher(Dependencies dependencies, fs::path target_root,
                                 std::unique_ptr<VolumeLeases> leases)
    : dependencies_(dependencies),
      logger_(dependencies.logger.WithComponent("node-agent.csi")),
      target_root_(std::move(target_root)),
      canonical_target_root_(Canonical(target_root_)),
      leases_(std::move(leases)) {}

core::Result<std::unique_ptr<VolumePublisher>> VolumePublisher::Create(Dependencies dependencies,
                                                                       fs::path target_root) {
  if (!target_root.is_absolute() || target_root.lexically_normal() != target_root ||
      target_root == "/") {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("the CSI target root {:?} must be a normalized absolute "
                                       "folder other than /",
                                       target_root.string()));
  }
  auto leases = VolumeLeases::Open(dependencies.layout.CsiVolumeDirectory());
  if (!leases) return std::unexpected(leases.error());
  std::unique_ptr<VolumePublisher> publisher(
      new VolumePublisher(dependencies, std::move(target_root), std::move(*leases)));
  if (auto recovered = publisher->Recover(); !recovered) {
    return std::unexpected(recovered.error());
  }
  return publisher;
}

core::Status VolumePublisher::Recover() {
  recovery_.removed_unreadable = leases_->report().removed_unreadable;
  auto mounts = dependencies_.mounter.Mounts();
  if (!mounts) return std::unexpected(mounts.error().Wrap("reading the mount table"));
  std::set<std::string> leased_mount_points;
  for (const VolumeLease& lease : leases_->List()) {
    const fs::path mount_point = Canonical(lease.target_path);
    if (FindMount(*mounts, mount_point) != nullptr) {
      leased_mount_points.insert(mount_point.string());
      ++recovery_.kept;
      continue;
    }
    // Written before a mount that never happened, or left by an unmount whose record removal
    // did not: nothing is mounted, so nothing is in use.
    if (auto dropped = leases_->Drop(lease.target_path); !dropped) return dropped;
    ++recovery_.dropped_not_mounted;
    logger_.Info("csi_lease_dropped", {{"volume", lease.volume_id},
                                       {"target", lease.target_path},
                                       {"digest", core::FormatDigest(lease.revision_digest)},
                                       {"reason", "not mounted"}});
  }
  for (const MountEntry& mount : *mounts) {
    const auto digest = ViewDigestOf(mount);
    if (!digest || leased_mount_points.contains(mount.mount_point)) continue;
    if (!CheckTargetPath(mount.mount_point, canonical_target_root_)) continue;
    // A view mounted under the target root without a record (records lost with a wiped
    // folder): hold a lease anyway, so eviction keeps what a pod reads.
    VolumeLease lease{
        .target_path = mount.mount_point,
        .revision_digest = *digest,
        .published_unix_seconds = std::chrono::duration_cast<std::chrono::seconds>(
                                      dependencies_.clock.WallNow().time_since_epoch())
                                      .count()};
    if (auto put = leases_->Put(lease); !put) return put;
    leased_mount_points.insert(mount.mount_point);
    ++recovery_.adopted;
    logger_.Warn("csi_lease_adopted",
                 {{"target", lease.target_path}, {"digest", core::FormatDigest(*digest)}});
  }
  logger_.Info("csi_leases_recovered", {{"kept", recovery_.kept},
                                        {"dropped_not_mounted", recovery_.dropped_not_mounted},
                                        {"adopted", recovery_.adopted},
                                        {"removed_unreadable", recovery_.removed_unreadable}});
  return core::Ok();
}

core::Result<bool> VolumePublisher::IsMounted(const std::string& target) const {
  auto mounts = dependencies_.mounter.Mounts();
  if (!mounts) return std::unexpected(mounts.error().Wrap("reading the mount table"));
  return FindMount(*mounts, Canonical(target)) != nullptr;
}

core::Status VolumePublisher::MakeTarget(const std::string& target, bool& created) const {
  std::error_code error;
  created = fs::create_directories(target, error);
  if (error) {
    return core::MakeError(core::ErrorCode::kIo, fmt::format("creating the target folder {}: {}",
                                                             target, error.message()));
  }
  struct stat info {};
  if (::lstat(target.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("the target path {} is not a folder", target));
  }
  // No symlink on the way may lead the mount out of the target root.
  const fs::path relative = fs::path(target).lexically_relative(target_root_);
  if (Canonical(target) != canonical_target_root_ / relative) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("the target path {} goes through a symlink", target));
  }
  return core::Ok();
}

core::Status VolumePublisher::Publish(const PublishRequest& request) {
  if (auto valid = CheckTargetPath(request.target_path, target_root_); !valid) return valid;
  const std::string key = core::api::ObjectKey(request.pod_namespace, request.revision_name);
  if (!dependencies_.resolver.RevisionsSynced()) {
    // "Not found" from a cache still filling would be a lie; kubelet retries UNAVAILABLE.
    return std::unexpected(core::Error(
        core::ErrorCode::kUnavailable,
        "the node agent has not synced its view of the cluster yet; retry shortly", true));
  }
  // Held from the revision check to the lease, so eviction cannot claim the revision between
  // the two (ClaimUnmounted takes it too).
  std::lock_guard lock(mutex_);
  const RevisionStatus revision =
      dependencies_.resolver.ResolveRevision(request.pod_namespace, request.revision_name);
  auto refuse = [&](std::string message) {
    logger_.Warn("csi_publish_refused",
                 {{"volume", request.volume_id},
                  {"revision", key},
                  {"pod", core::api::ObjectKey(request.pod_namespace, request.pod_name)},
                  {"reason", message}});
    return core::MakeError(core::ErrorCode::kConflict, std::move(message));
  };
  if (!revision.known) {
    return refuse(fmt::format("ModelRevision {} cannot be mounted: {}", key, revision.problem));
  }
  const std::string digest = core::FormatDigest(revision.digest);
  if (revision.revoked) {
    return refuse(fmt::format("ModelRevision {} ({}) is revoked; it is not mounted", key, digest));
  }
  if (claimed_.contains(revision.digest)) {
    return std::unexpected(core::Error(
        core::ErrorCode::kUnavailable,
        fmt::format("ModelRevision {} ({}) is being evicted from this node's cache; retry", key,
                    digest),
        true));
  }
  if (!revision.ready_here) {
    return refuse(
        fmt::format("ModelRevision {} ({}) is not Ready in this node's cache", key, digest));
  }

  auto mounted = IsMounted(request.target_path);
  if (!mounted) return std::unexpected(mounted.error());
  if (auto existing = leases_->AtTarget(request.target_path)) {
    const bool same = existing->revision_digest == revision.digest &&
                      (existing->volume_id == request.volume_id || existing->volume_id.empty());
    if (!same) {
      return core::MakeError(
          core::ErrorCode::kAlreadyExists,
          fmt::format("target {} already holds volume {:?} ({})", request.target_path,
                      existing->volume_id, core::FormatDigest(existing->revision_digest)));
    }
    if (*mounted) {
      // Published already: the same answer again. A lease adopted at start learns its volume.
      if (existing->volume_id.empty()) {
        VolumeLease named = *existing;
        named.volume_id = request.volume_id;
        named.revision = key;
        named.pod_namespace = request.pod_namespace;
        named.pod_name = request.pod_name;
        named.pod_uid = request.pod_uid;
        return leases_->Put(named);
      }
      return core::Ok();
    }
    // A record without its mount (the mount failed, or someone unmounted it): mount again.
  } else if (*mounted) {
    return core::MakeError(
        core::ErrorCode::kAlreadyExists,
        fmt::format("something the plugin did not publish is mounted at {}", request.target_path));
  }
  for (const VolumeLease& other : leases_->OfVolume(request.volume_id)) {
    if (other.target_path != request.target_path && other.revision_digest != revision.digest) {
      return refuse(fmt::format("volume {:?} is already published at {} with {}", request.volume_id,
                                other.target_path, core::FormatDigest(other.revision_digest)));
    }
  }

  bool created = false;
  if (auto made = MakeTarget(request.target_path, created); !made) return made;
  const VolumeLease lease{
      .volume_id = request.volume_id,
      .target_path = request.target_path,
      .revision_digest = revision.digest,
      .revision = key,
      .pod_namespace = request.pod_namespace,
      .pod_name = request.pod_name,
      .pod_uid = request.pod_uid,
      .published_unix_seconds = std::chrono::duration_cast<std::chrono::seconds>(
                                    dependencies_.clock.WallNow().time_since_epoch())
                                    .count()};
  // The lease first: a crash after the mount must find a record, a crash before it finds a
  // record that the next start drops.
  if (auto put = leases_->Put(lease); !put) {
    if (created) ::rmdir(request.target_path.c_str());
    return put;
  }
  const fs::path view = dependencies_.layout.RevisionView(revision.digest);
  if (auto bound = dependencies_.mounter.BindReadOnly(view, request.target_path); !bound) {
    (void)leases_->Drop(request.target_path);
    if (created) ::rmdir(request.target_path.c_str());
    logger_.Error("csi_publish_failed", {{"volume", request.volume_id},
                                         {"target", request.target_path},
                                         {"digest", digest},
                                         {"error", bound.error().ToString()}});
    return bound;
  }
  logger_.Info("csi_volume_published", {{"volume", request.volume_id},
                                        {"target", request.target_path},
                                        {"revision", key},
                                        {"digest", digest},
                                        {"pod", PodOf(lease)},
                                        {"pod_uid", request.pod_uid}});
  return core::Ok();
}

core::Status VolumePublisher::Unpublish(const UnpublishRequest& request) {
  if (auto valid = CheckTargetPath(request.target_path, target_root_); !valid) return valid;
  std::lock_guard lock(mutex_);
  const auto existing = leases_->AtTarget(request.target_path);
  if (existing && !existing->volume_id.empty() && existing->volume_id != request.volume_id) {
    return core::MakeError(core::ErrorCode::kNotFound,
                           fmt::format("target {} holds volume {:?}, not {:?}", request.target_path,
                                       existing->volume_id, request.volume_id));
  }
  if (auto unmounted = dependencies_.mounter.Unmount(request.target_path); !unmounted) {
    return unmounted;
  }
  auto mounted = IsMounted(request.target_path);
  if (!mounted) return std::unexpected(mounted.error());
  if (*mounted) {
    return core::MakeError(
        core::ErrorCode::kInternal,
        fmt::format("{} is still mounted after unmounting", request.target_path));
  }
  // rmdir, never a recursive removal: an unmounted target is an empty folder we made; anything
  // else there is not ours to delete.
  if (::rmdir(request.target_path.c_str()) != 0 && errno != ENOENT) {
    return std::unexpected(ErrnoError(errno, "removing the target folder", request.target_path));
  }
  if (auto dropped = leases_->Drop(request.target_path); !dropped) return dropped;
  if (existing) {
    logger_.Info("csi_volume_unpublished",
                 {{"volume", request.volume_id},
                  {"target", request.target_path},
                  {"digest", core::FormatDigest(existing->revision_digest)},
                  {"pod", PodOf(*existing)}});
  }
  return core::Ok();
}

std::optional<ViewClaim> VolumePublisher::ClaimUnmounted(const core::Sha256Bytes& revision_digest) {
  std::lock_guard lock(mutex_);
  if (leases_->InUseDigests().contains(revision_digest)) return std::nullopt;
  claimed_.insert(revision_digest);
  return ViewClaim([this, revision_digest] {
    std::lock_guard released(mutex_);
    if (auto found = claimed_.find(revision_digest); found != claimed_.end()) claimed_.erase(found);
  });
}

}  // namespace modelplane::agent
