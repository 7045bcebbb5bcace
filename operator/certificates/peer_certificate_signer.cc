#include "operator/certificates/peer_certificate_signer.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/api/peer_identity.h"
#include "core/api/timestamp.h"
#include "core/json/json_lookup.h"
#include "core/kube/object_store.h"
#include "core/kube/resource_type.h"
#include "core/text/base64.h"
#include "core/workqueue/rate_limiter.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;
using Verdict = PeerCertificateDecision::Verdict;

constexpr std::chrono::seconds kNodeWait{2};
// Certificates start a little in the past: a peer whose clock runs behind still accepts them.
constexpr std::chrono::minutes kBackdate{5};

std::string JoinAddresses(const std::vector<std::string>& addresses) {
  return addresses.empty() ? "-" : fmt::format("{}", fmt::join(addresses, ","));
}

}  // namespace

core::Result<std::unique_ptr<PeerCertificateSigner>> PeerCertificateSigner::Create(
    core::KubeClient& client, const core::Watcher& watcher, PeerCertificateSignerOptions options,
    const core::Logger& logger, const core::Clock& clock) {
  if (options.policy.agent_username.empty()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "the peer signer needs the node agent's ServiceAccount user name");
  }
  auto authority =
      core::CertificateAuthority::FromFiles(options.ca_certificate_file, options.ca_key_file);
  if (!authority) return std::unexpected(authority.error().Wrap("loading the peer CA"));
  return std::unique_ptr<PeerCertificateSigner>(new PeerCertificateSigner(
      client, watcher, std::move(options), std::move(*authority), logger, clock));
}

PeerCertificateSigner::PeerCertificateSigner(core::KubeClient& client, const core::Watcher& watcher,
                                             PeerCertificateSignerOptions options,
                                             core::CertificateAuthority authority,
                                             const core::Logger& logger, const core::Clock& clock)
    : client_(client),
      options_(std::move(options)),
      authority_(std::move(authority)),
      logger_(logger.WithComponent("operator.peer_certificates")),
      clock_(clock),
      requests_(client, watcher,
                {.type = core::resources::CertificateSigningRequests(),
                 .field_selector = fmt::format("spec.signerName={}", core::api::kPeerSignerName),
                 .resync_period = options_.resync_period},
                clock),
      queue_(core::MakeDefaultControllerRateLimiter(clock), clock),
      runner_(
          queue_, [this](const std::string& name) { return Reconcile(name); }, 1,
          [this](const std::string& name, const core::Error& error) {
            logger_.Warn(
                "reconcile_failed",
                {{"controller", "peer_certificates"}, {"key", name}, {"error", error.ToString()}});
          }) {
  const auto enqueue = [this](const core::ObjectPtr& object) {
    queue_.Add(core::ObjectStore::KeyOf(*object));
  };
  requests_.AddHandlers(
      {.on_add = enqueue,
       .on_update = [enqueue](const core::ObjectPtr&, const core::ObjectPtr& now) { enqueue(now); },
       .on_delete = {}});
}

PeerCertificateSigner::~PeerCertificateSigner() {
  Stop();
}

void PeerCertificateSigner::Start() {
  if (started_) return;
  started_ = true;
  requests_.Start();
  runner_.Start();
}

void PeerCertificateSigner::Stop() {
  if (!started_) return;
  started_ = false;
  runner_.Stop();
  requests_.Stop();
}

core::Result<core::ReconcileResult> PeerCertificateSigner::Reconcile(const std::string& name) {
  const core::ObjectPtr request = requests_.store().Get(name);
  if (!request) return core::ReconcileResult::Done();
  const PeerCertificateDecision first = DecidePeerCertificate(*request, nullptr, options_.policy);
  if (first.verdict != Verdict::kNeedsNode) return Apply(*request, first);
  auto node = client_.Get(core::resources::Nodes(), "", first.node_name);
  if (!node && node.error().code() == core::ErrorCode::kNotFound) {
    return Apply(*request, {.verdict = Verdict::kDeny,
                            .reason = "NodeNotFound",
                            .message = "no Node named " + first.node_name,
                            .node_name = first.node_name});
  }
  if (!node) return std::unexpected(node.error());
  return Apply(*request, DecidePeerCertificate(*request, &*node, options_.policy));
}

core::Result<core::ReconcileResult> PeerCertificateSigner::Apply(
    const json& request, const PeerCertificateDecision& decision) {
  const std::string name = core::ObjectStore::KeyOf(request);
  switch (decision.verdict) {
    case Verdict::kIgnore: return core::ReconcileResult::Done();
    case Verdict::kNeedsNode:  // not reached: Reconcile reads the Node first
      return core::ReconcileResult::RequeueAfter(kNodeWait);
    case Verdict::kDeny: {
      auto denied = AddCondition(request, "Denied", decision.reason, decision.message);
      if (!denied) return std::unexpected(denied.error());
      logger_.Warn("peer_certificate_denied", {{"request", name},
                                               {"node", decision.node_name},
                                               {"reason", decision.reason},
                                               {"message", decision.message}});
      return core::ReconcileResult::Done();
    }
    case Verdict::kIssue:
      if (auto status = Issue(request, decision); !status) return std::unexpected(status.error());
      return core::ReconcileResult::Done();
  }
  return core::ReconcileResult::Done();
}

core::Result<json> PeerCertificateSigner::AddCondition(const json& request, const std::string& type,
                                                       const std::string& reason,
                                                       const std::string& message) {
  json updated = request;
  json& conditions = updated["status"]["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  const std::string now = core::api::FormatTimestamp(
      std::chrono::time_point_cast<std::chrono::microseconds>(clock_.WallNow()));
  conditions.push_back({{"type", type},
                        {"status", "True"},
                        {"reason", reason},
                        {"message", message},
                        {"lastUpdateTime", now},
                        {"lastTransitionTime", now}});
  return client_.Request("PUT",
                         core::resources::CertificateSigningRequests().Path(
                             "", core::ObjectStore::KeyOf(request), "approval"),
                         updated, "application/json");
}

core::Status PeerCertificateSigner::Issue(const json& request,
                                          const PeerCertificateDecision& decision) {
  const std::string name = core::ObjectStore::KeyOf(request);
  auto parsed = ReadCertificateRequest(request);
  if (!parsed) return std::unexpected(parsed.error().MarkTerminal());
  json approved = request;
  const json* conditions = core::FindMember(request, {"status", "conditions"});
  const bool already_approved =
      conditions != nullptr && conditions->is_array() &&
      std::any_of(conditions->begin(), conditions->end(), [](const json& condition) {
        return condition.is_object() && condition.value("type", "") == "Approved";
      });
  if (!already_approved) {
    auto updated = AddCondition(request, "Approved", "ModelplanePeerPolicy", decision.message);
    if (!updated) return std::unexpected(updated.error());
    approved = std::move(*updated);
  }
  const auto now = clock_.WallNow();
  auto certificate = authority_.Issue(*parsed, {.names = decision.names,
                                                .not_before = now - kBackdate,
                                                .not_after = now + decision.lifetime});
  if (!certificate) return std::unexpected(certificate.error().Wrap("signing " + name));
  approved["status"]["certificate"] = core::EncodeBase64(*certificate);
  auto signed_request =
      client_.UpdateStatus(core::resources::CertificateSigningRequests(), approved);
  if (!signed_request) return std::unexpected(signed_request.error());
  logger_.Info("peer_certificate_issued",
               {{"request", name},
                {"node", decision.node_name},
                {"lifetime_seconds", std::to_string(decision.lifetime.count())},
                {"addresses", JoinAddresses(decision.names.ip_addresses)},
                {"addresses_left_out", JoinAddresses(decision.left_out_addresses)}});
  return core::Ok();
}

}  // namespace modelplane::controller
