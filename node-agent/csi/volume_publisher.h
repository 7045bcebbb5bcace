// What NodePublishVolume and NodeUnpublishVolume do, apart from gRPC: check the revision, mount
// its view read-only at the pod's target path, and hold an in-use lease for as long as it is
// mounted. The node service (node_service.h) turns requests into these calls and errors into
// gRPC codes.
//
// Errors (codes the node service maps to gRPC):
//   kInvalidArgument  the target path breaks target_path.h's rule
//   kConflict         FAILED_PRECONDITION: the revision is unknown, invalid, revoked or not
//                     Ready in this node's store, or the volume id is already published
//                     elsewhere with another revision
//   kAlreadyExists    the target already holds another volume, or a mount not ours
//   kNotFound         unpublish of a target that holds another volume
//   kUnavailable      the mount is busy, or the resolver has not synced yet (retryable)
//   others            the kernel or the disk refused
//
// Both calls are idempotent: publishing what is already published at that target, or
// unpublishing what is not mounted, succeeds. One volume id may be published at several
// targets with the same revision (the mounts are read-only, so sharing them is harmless).
//
// Restart: Create loads the lease records (volume_leases.h) and compares them with the mount
// table: a record whose target is not mounted is dropped, and a mount of a revision view under
// the target root without a record is adopted (its volume id unknown), so every mounted view
// holds a lease.
//
// Eviction (ViewGuard): ClaimUnmounted succeeds only while no lease names the revision, and
// while the claim lives Publish refuses the revision (UNAVAILABLE, retryable); the check and the
// lease are under one lock, so a mount and an eviction of one revision never interleave.
//
// Thread safety: Publish, Unpublish and ClaimUnmounted may be called from any thread (they are
// serialised; a bind mount takes microseconds); queries may run at any time.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/log/logger.h"
#include "node-agent/csi/mounter.h"
#include "node-agent/csi/revision_resolver.h"
#include "node-agent/csi/volume_leases.h"
#include "node-agent/store/store_layout.h"
#include "node-agent/store/view_guard.h"

namespace modelplane::agent {

struct PublishRequest {
  std::string volume_id;
  std::string target_path;
  std::string revision_name;  // a ModelRevision in pod_namespace
  std::string pod_namespace;  // from kubelet (podInfoOnMount), never from a volume attribute
  std::string pod_name;
  std::string pod_uid;
};

struct UnpublishRequest {
  std::string volume_id;
  std::string target_path;
};

struct LeaseRecoveryReport {
  std::size_t kept = 0;                 // record and mount both there
  std::size_t dropped_not_mounted = 0;  // a record whose target is not mounted
  std::size_t adopted = 0;              // a mount of a view without a record
  std::size_t removed_unreadable = 0;   // records that could not be read
};

class VolumePublisher final : public ViewGuard {
 public:
  struct Dependencies {
    const StoreLayout& layout;  // views to mount, and the lease records' folder
    const RevisionResolver& resolver;
    Mounter& mounter;
    const core::Logger& logger;
    const core::Clock& clock;
  };

  // `target_root`: the only folder below which targets may lie (kubelet's folder).
  [[nodiscard]] static core::Result<std::unique_ptr<VolumePublisher>> Create(
      Dependencies dependencies, std::filesystem::path target_root);
  VolumePublisher(const VolumePublisher&) = delete;
  VolumePublisher& operator=(const VolumePublisher&) = delete;

  [[nodiscard]] core::Status Publish(const PublishRequest& request);
  [[nodiscard]] std::optional<ViewClaim> ClaimUnmounted(
      const core::Sha256Bytes& revision_digest) override;
  [[nodiscard]] core::Status Unpublish(const UnpublishRequest& request);

  [[nodiscard]] std::set<core::Sha256Bytes> InUseDigests() const { return leases_->InUseDigests(); }
  [[nodiscard]] std::vector<VolumeLease> Leases() const { return leases_->List(); }
  [[nodiscard]] const LeaseRecoveryReport& recovery() const { return recovery_; }
  [[nodiscard]] const std::filesystem::path& target_root() const { return target_root_; }

 private:
  VolumePublisher(Dependencies dependencies, std::filesystem::path target_root,
                  std::unique_ptr<VolumeLeases> leases);
  [[nodiscard]] core::Status Recover();
  // Under mutex_.
  [[nodiscard]] core::Result<bool> IsMounted(const std::string& target) const;
  [[nodiscard]] core::Status MakeTarget(const std::string& target, bool& created) const;

  const Dependencies dependencies_;
  const core::Logger logger_;
  const std::filesystem::path target_root_;
  const std::filesystem::path canonical_target_root_;
  std::unique_ptr<VolumeLeases> leases_;
  LeaseRecoveryReport recovery_;
  std::mutex mutex_;                          // one publish, unpublish or claim at a time
  std::multiset<core::Sha256Bytes> claimed_;  // under mutex_: revisions being evicted
};

}  // namespace modelplane::agent
