// The operator's signer for modelplane.io/peer: watches CertificateSigningRequests for that
// signer, decides each by peer_certificate_policy.h, and approves and signs (or denies) it with
// the cluster's peer CA, so every node agent serves and calls its peers with a certificate of
// its own node, whose private key never left the node.
//
// The CA's key is read from files (a Secret mounted into the operator only); agents get the CA
// certificate alone. The Node a request names is read when the request is decided (requests are
// rare: one per node per renewal). Runs only while the operator leads, so two replicas never
// sign the same request twice.
// Thread safety: Start, Stop and HasSynced from the owning thread; Reconcile runs on the
// runner's worker.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/clock/clock.h"
#include "core/kube/informer.h"
#include "core/kube/kube_client.h"
#include "core/kube/watch_stream.h"
#include "core/log/logger.h"
#include "core/pki/certificate_authority.h"
#include "core/workqueue/controller_runner.h"
#include "core/workqueue/work_queue.h"
#include "operator/certificates/peer_certificate_policy.h"

namespace modelplane::controller {

struct PeerCertificateSignerOptions {
  PeerCertificatePolicy policy;
  std::string ca_certificate_file;  // PEM, CA:TRUE
  std::string ca_key_file;          // PEM, unencrypted
  std::chrono::seconds resync_period{300};
};

class PeerCertificateSigner {
 public:
  // Fails when the CA cannot be read or is not a CA. `client`, `watcher`, `logger` and `clock`
  // must outlive the signer.
  [[nodiscard]] static core::Result<std::unique_ptr<PeerCertificateSigner>> Create(
      core::KubeClient& client, const core::Watcher& watcher, PeerCertificateSignerOptions options,
      const core::Logger& logger, const core::Clock& clock);
  PeerCertificateSigner(const PeerCertificateSigner&) = delete;
  PeerCertificateSigner& operator=(const PeerCertificateSigner&) = delete;
  ~PeerCertificateSigner();  // Stop()

  void Start();
  [[nodiscard]] bool HasSynced() const { return requests_.HasSynced(); }
  void Stop();

  [[nodiscard]] core::Result<core::ReconcileResult> Reconcile(const std::string& name);

 private:
  PeerCertificateSigner(core::KubeClient& client, const core::Watcher& watcher,
                        PeerCertificateSignerOptions options, core::CertificateAuthority authority,
                        const core::Logger& logger, const core::Clock& clock);
  [[nodiscard]] core::Result<core::ReconcileResult> Apply(const nlohmann::json& request,
                                                          const PeerCertificateDecision& decision);
  [[nodiscard]] core::Result<nlohmann::json> AddCondition(const nlohmann::json& request,
                                                          const std::string& type,
                                                          const std::string& reason,
                                                          const std::string& message);
  [[nodiscard]] core::Status Issue(const nlohmann::json& request,
                                   const PeerCertificateDecision& decision);

  core::KubeClient& client_;
  const PeerCertificateSignerOptions options_;
  const core::CertificateAuthority authority_;
  const core::Logger logger_;
  const core::Clock& clock_;
  core::Informer requests_;
  core::WorkQueue queue_;
  core::ControllerRunner runner_;
  bool started_ = false;
};

}  // namespace modelplane::controller
