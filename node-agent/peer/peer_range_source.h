// PeerRangeSource: reads blobs by digest from one other node agent's PeerServer, with Range GETs
// over core's HttpClient (keep-alive pool, TLS with the peer CA, mutual TLS or HMAC tokens).
//
// Errors follow the RangeSource contract: 404 -> kNotFound (the engine falls back to the next
// source), 401 -> kUnauthenticated, 403 -> kPermissionDenied (the peer's scope: the engine reads
// the blob from another source), 503/429 -> kThrottled (retryable), fewer bytes than asked ->
// kDataLoss, kDeadlineExceeded past ReadContext::deadline, kCancelled when its token fires,
// kUnavailable for a peer that cannot be reached. The client does not retry by itself: the engine
// owns retries, and a peer that is busy is better left for another source than waited on.
//
// Cancellation and deadlines are checked before the request and on every piece of body that
// arrives; every socket read also has a timeout of min(stall_timeout, time to the deadline). A
// peer that stalls therefore ends by the deadline, but a cancel during a stall takes effect
// when the stall times out (HttpClient cannot yet be interrupted from another thread).
//
// Thread safety: ReadRange may be called from many threads at once (see range_source.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "core/clock/clock.h"
#include "core/digest/file_set_tree.h"
#include "core/digest/sha256.h"
#include "core/http/http_client.h"
#include "node-agent/fetch/range_source.h"
#include "node-agent/peer/peer_token.h"

namespace modelplane::agent {

// Which blobs a peer can serve, as the ModelCache statuses the agent reads say: those of the
// revisions it holds Ready (now) and of those it is staging (later: a "not found" from it means
// "not yet"). Everything, when nothing is known (the standalone fetch command's peers).
struct PeerHolding {
  bool everything = true;
  std::set<core::Sha256Bytes> ready;
  std::set<core::Sha256Bytes> staging;
};

// The operator's ticket for the revision being staged (core/pki/peer_ticket.h) and that
// revision's file tree, which proves each blob asked for is one of its files; sent with every
// request so that a peer that checks scope (peer_scope.h) serves it. Empty: none is sent.
struct PeerTicketHolding {
  std::string ticket;
  std::shared_ptr<const core::FileSetTree> files;
};

struct PeerRangeSourceOptions {
  // "host:port", IPv6 as "[::1]:7443", spelled as the peer advertises it (ModelCache status):
  // it is also the audience of the tokens, which the peer accepts only for its own endpoint.
  std::string endpoint;
  // https with these (the peer CA, and a client certificate for mutual TLS); nullopt: plain http,
  // which the peer server allows only when configured for it (loopback benchmarks).
  std::optional<core::TlsClientOptions> tls;
  std::optional<PeerTokenKey> token_key;  // signs every request (for `endpoint`) when set
  std::chrono::seconds token_lifetime{120};
  std::size_t max_concurrency = 8;
  std::chrono::milliseconds connect_timeout{2'000};
  // A socket read that waits longer than this fails: a peer that sends nothing is stalled.
  std::chrono::milliseconds stall_timeout{10'000};
  bool nearby = true;  // in this node's zone
  PeerHolding holding;
  PeerTicketHolding ticket;
};

class PeerRangeSource final : public RangeSource {
 public:
  // `clock` (wall time signs token expiries) must outlive the source.
  [[nodiscard]] static core::Result<std::unique_ptr<PeerRangeSource>> Create(
      PeerRangeSourceOptions options, const core::Clock& clock);

  [[nodiscard]] std::string_view tier() const override;
  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] std::size_t max_concurrency() const override { return options_.max_concurrency; }
  [[nodiscard]] bool MayHold(const core::Sha256Bytes& blob) const override;
  [[nodiscard]] bool MayHoldLater(const core::Sha256Bytes& blob) const override;
  [[nodiscard]] bool nearby() const override { return options_.nearby; }
  [[nodiscard]] const std::string& endpoint() const { return options_.endpoint; }

  // What the peer holds now, as the latest statuses say; a running fetch sees it at its next
  // choice of source.
  void SetHolding(PeerHolding holding);
  // A renewed ticket (the operator renews it before it expires); the next request sends it.
  void SetTicket(PeerTicketHolding ticket);

  [[nodiscard]] core::Status ReadRange(const SourceFile& file, std::uint64_t offset,
                                       std::span<std::byte> destination,
                                       const ReadContext& context) override;

 private:
  PeerRangeSource(PeerRangeSourceOptions options, const core::Clock& clock,
                  std::unique_ptr<core::HttpClient> client);

  const PeerRangeSourceOptions options_;
  const core::Clock& clock_;
  const std::string name_;
  const std::string base_url_;
  std::unique_ptr<core::HttpClient> client_;
  mutable std::mutex holding_mutex_;  // guards the pointers holding_ and ticket_
  std::shared_ptr<const PeerHolding> holding_;
  std::shared_ptr<const PeerTicketHolding> ticket_;
};

}  // namespace modelplane::agent
