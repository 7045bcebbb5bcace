#include "node-agent/peer/peer_certificate_requester.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/api/peer_identity.h"
#include "core/api/timestamp.h"
#include "core/io/bounded_file.h"
#include "core/io/unique_fd.h"
#include "core/json/json_lookup.h"
#include "core/kube/resource_type.h"
#include "core/pki/certificate_info.h"
#include "core/pki/certificate_request.h"
#include "core/pki/private_key.h"
#include "core/text/base64.h"

namespace modelplane::agent {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kIdentityFile = "peer.pem";
constexpr std::string_view kPendingKeyFile = "pending-key.pem";
constexpr std::size_t kMaxFileBytes = 64 * 1024;

// A file's content, or "" when it does not exist (no certificate yet).
core::Result<std::string> ReadIfPresent(const std::string& path) {
  auto content = core::ReadBoundedFile(path, kMaxFileBytes);
  if (!content && content.error().code() == core::ErrorCode::kNotFound) return std::string();
  return content;
}

// Writes `content` to `path` through a temporary file, readable by the owner only, so a reader
// sees the old file or the new one, never a part.
core::Status WritePrivately(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp";
  ::unlink(temporary.c_str());
  core::UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return core::MakeError(
        core::ErrorCode::kIo,
        fmt::format("creating {}: {}", temporary, std::system_category().message(errno)));
  }
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t wrote = ::write(fd.get(), content.data() + written, content.size() - written);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      return core::MakeError(
          core::ErrorCode::kIo,
          fmt::format("writing {}: {}", temporary, std::system_category().message(errno)));
    }
    written += static_cast<std::size_t>(wrote);
  }
  if (::fsync(fd.get()) != 0 || ::rename(temporary.c_str(), path.c_str()) != 0) {
    return core::MakeError(
        core::ErrorCode::kIo,
        fmt::format("replacing {}: {}", path, std::system_category().message(errno)));
  }
  return core::Ok();
}

bool HasCondition(const json& request, std::string_view type, std::string* message) {
  const json* conditions = core::FindMember(request, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return false;
  for (const json& condition : *conditions) {
    if (condition.is_object() && core::StringMember(condition, {"type"}) == type) {
      *message = fmt::format("{}: {}", core::StringMember(condition, {"reason"}),
                             core::StringMember(condition, {"message"}));
      return true;
    }
  }
  return false;
}

}  // namespace

PeerCertificateRequester::PeerCertificateRequester(core::KubeClient& client,
                                                   PeerCertificateRequesterOptions options,
                                                   const core::Logger& logger,
                                                   const core::Clock& clock)
    : client_(client),
      options_(std::move(options)),
      logger_(logger.WithComponent("agent.peer_certificate")),
      clock_(clock) {}

std::string PeerCertificateRequester::file() const {
  return (fs::path(options_.directory) / kIdentityFile).string();
}

core::Result<PeerCertificate> PeerCertificateRequester::Current() const {
  auto pem = ReadIfPresent(file());
  if (!pem) return std::unexpected(pem.error());
  if (pem->empty()) return core::MakeError(core::ErrorCode::kNotFound, "no peer certificate yet");
  auto key = core::PrivateKey::FromPem(*pem);
  auto info = core::ReadCertificateInfo(*pem);
  if (!key || !info) {
    return core::MakeError(core::ErrorCode::kInvalidArgument, file() + " cannot be read");
  }
  const std::string identity = core::api::PeerIdentityName(options_.node_name);
  if (info->public_key_fingerprint != key->fingerprint() ||
      std::find(info->names.dns_names.begin(), info->names.dns_names.end(), identity) ==
          info->names.dns_names.end()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           file() + " is not a certificate of this node for its key");
  }
  return PeerCertificate{
      .file = file(), .not_before = info->not_before, .not_after = info->not_after};
}

core::Result<PeerCertificate> PeerCertificateRequester::Ensure(core::CancellationToken& cancel) {
  std::error_code error;
  fs::create_directories(options_.directory, error);
  if (error) {
    return core::MakeError(core::ErrorCode::kIo,
                           fmt::format("creating {}: {}", options_.directory, error.message()));
  }
  if (auto current = Current(); current && clock_.WallNow() < current->renew_at()) {
    return current;
  }
  // A key waiting for its certificate from before a restart is used again; otherwise a new one.
  const std::string pending_path = (fs::path(options_.directory) / kPendingKeyFile).string();
  auto pending_pem = ReadIfPresent(pending_path);
  if (!pending_pem) return std::unexpected(pending_pem.error());
  auto key =
      pending_pem->empty() ? core::PrivateKey::Generate() : core::PrivateKey::FromPem(*pending_pem);
  if (!key) key = core::PrivateKey::Generate();  // an unreadable leftover is replaced
  if (!key) return std::unexpected(key.error());
  if (pending_pem->empty() || pending_pem->find(key->ToPem()) == std::string::npos) {
    if (auto status = WritePrivately(pending_path, key->ToPem()); !status) {
      return std::unexpected(status.error());
    }
  }
  auto request_pem = core::MakeCertificateRequestPem(
      *key, {.common_name = std::string(core::api::kPeerCommonName),
             .dns_names = {core::api::PeerIdentityName(options_.node_name)},
             .ip_addresses = options_.ip_addresses});
  if (!request_pem) return std::unexpected(request_pem.error());
  const std::string name =
      core::api::PeerCertificateRequestName(options_.node_name, key->fingerprint());
  const json request = {
      {"apiVersion", "certificates.k8s.io/v1"},
      {"kind", "CertificateSigningRequest"},
      {"metadata", {{"name", name}, {"labels", {{"app.kubernetes.io/managed-by", "modelplane"}}}}},
      {"spec",
       {{"request", core::EncodeBase64(*request_pem)},
        {"signerName", std::string(core::api::kPeerSignerName)},
        {"expirationSeconds", options_.requested_lifetime.count()},
        {"usages", {"digital signature", "server auth", "client auth"}}}}};
  json labelled = request;
  // Label values are at most 63 characters; the node name goes in only when it fits.
  if (options_.node_name.size() <= 63) {
    labelled["metadata"]["labels"]["modelplane.io/node"] = options_.node_name;
  }
  auto created = client_.Create(core::resources::CertificateSigningRequests(), "", labelled);
  if (!created && created.error().code() != core::ErrorCode::kAlreadyExists) {
    return std::unexpected(created.error().Wrap("creating CertificateSigningRequest " + name));
  }
  logger_.Info("peer_certificate_requested",
               {{"request", name}, {"key", key->fingerprint()}, {"created", created.has_value()}});
  auto certificate_pem = WaitForCertificate(name, cancel);
  if (!certificate_pem) {
    if (certificate_pem.error().code() == core::ErrorCode::kPermissionDenied) {
      ::unlink(pending_path.c_str());  // the next attempt asks with a new key
    }
    return std::unexpected(certificate_pem.error());
  }
  auto info = core::ReadCertificateInfo(*certificate_pem);
  if (!info) return std::unexpected(info.error().Wrap("reading the issued certificate"));
  if (info->public_key_fingerprint != key->fingerprint()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "the issued certificate is for another key than this node's");
  }
  if (auto status = WritePrivately(file(), key->ToPem() + *certificate_pem); !status) {
    return std::unexpected(status.error());
  }
  ::unlink(pending_path.c_str());
  auto current = Current();
  if (!current) return std::unexpected(current.error());
  logger_.Info("peer_certificate_issued",
               {{"request", name},
                {"not_after",
                 core::api::FormatTimestamp(std::chrono::time_point_cast<std::chrono::microseconds>(
                     current->not_after))}});
  return current;
}

core::Result<std::string> PeerCertificateRequester::WaitForCertificate(
    const std::string& name, core::CancellationToken& cancel) {
  const auto deadline = clock_.Now() + options_.wait_timeout;
  while (true) {
    auto request = client_.Get(core::resources::CertificateSigningRequests(), "", name);
    if (request) {
      std::string message;
      if (HasCondition(*request, "Denied", &message) ||
          HasCondition(*request, "Failed", &message)) {
        return core::MakeError(
            core::ErrorCode::kPermissionDenied,
            fmt::format("peer certificate request {} refused: {}", name, message));
      }
      const std::string encoded = core::StringMember(*request, {"status", "certificate"});
      if (!encoded.empty()) return core::DecodeBase64(encoded, "status.certificate");
    } else if (request.error().code() == core::ErrorCode::kNotFound) {
      return std::unexpected(
          core::Error(core::ErrorCode::kUnavailable,
                      fmt::format("peer certificate request {} was deleted", name), true));
    }
    if (clock_.Now() >= deadline) {
      return std::unexpected(core::Error(
          core::ErrorCode::kDeadlineExceeded,
          fmt::format("no certificate for request {} after {} s: is the operator's peer signer "
                      "running?",
                      name, options_.wait_timeout.count()),
          true));
    }
    if (!cancel.SleepFor(clock_, options_.poll_interval)) {
      return core::MakeError(core::ErrorCode::kCancelled,
                             "stopped while waiting for a certificate");
    }
  }
}

}  // namespace modelplane::agent
