// PeerCertificateRequester: gets this node's peer certificate from the cluster. The agent makes
// its own key, asks for a certificate with a CertificateSigningRequest for signer
// modelplane.io/peer (the operator signs it: operator/certificates), and keeps key and
// certificate together in one file, so a reader never sees a key of one and a certificate of
// another.
//
// `<directory>/peer.pem` holds the private key followed by the certificate (mode 0600). It is
// reused while it is for this node and has more than a third of its lifetime left; after that
// Ensure makes a NEW key and asks again (rotation), keeping the old file in use until the new
// certificate is there. A request that was made but not answered before a restart is found
// again by its name (one per key: core/api/peer_identity.h).
// Thread safety: one thread at a time (the agent's startup, then its renewal loop).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/kube/kube_client.h"
#include "core/log/logger.h"

namespace modelplane::agent {

struct PeerCertificateRequesterOptions {
  std::string node_name;
  std::string directory;
  // Addresses to ask for beside the node's identity name (the advertised one, when it is an
  // IP); the signer keeps only those the Node object lists.
  std::vector<std::string> ip_addresses;
  std::chrono::seconds requested_lifetime{std::chrono::hours(24 * 7)};
  std::chrono::milliseconds poll_interval{500};
  std::chrono::seconds wait_timeout{std::chrono::minutes(5)};
};

struct PeerCertificate {
  std::string file;  // key and certificate, PEM: both TlsServerOptions and TlsClientOptions files
  std::chrono::system_clock::time_point not_before;
  std::chrono::system_clock::time_point not_after;
  [[nodiscard]] std::chrono::system_clock::time_point renew_at() const {
    return not_before + (not_after - not_before) * 2 / 3;
  }
};

class PeerCertificateRequester {
 public:
  // `client`, `logger` and `clock` must outlive the requester.
  PeerCertificateRequester(core::KubeClient& client, PeerCertificateRequesterOptions options,
                           const core::Logger& logger, const core::Clock& clock);

  // A certificate for this node that is not due for renewal: the one on disk, or a new one.
  // Waits for the signer up to wait_timeout (kDeadlineExceeded, retryable), or until `cancel`
  // fires; a denied request fails with kPermissionDenied and the signer's reason, and its key is
  // dropped so the next call asks afresh.
  [[nodiscard]] core::Result<PeerCertificate> Ensure(core::CancellationToken& cancel);

  [[nodiscard]] std::string file() const;

 private:
  [[nodiscard]] core::Result<PeerCertificate> Current() const;
  [[nodiscard]] core::Result<std::string> WaitForCertificate(const std::string& name,
                                                             core::CancellationToken& cancel);

  core::KubeClient& client_;
  const PeerCertificateRequesterOptions options_;
  const core::Logger logger_;
  const core::Clock& clock_;
};

}  // namespace modelplane::agent
