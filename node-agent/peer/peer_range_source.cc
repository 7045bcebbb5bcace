#include "node-agent/peer/peer_range_source.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/pki/peer_ticket.h"
#include "node-agent/peer/peer_protocol.h"

namespace modelplane::agent {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// Below this a request cannot even connect; fail at once instead of starting it.
constexpr milliseconds kMinimumTimeout{1};

}  // namespace

core::Result<std::unique_ptr<PeerRangeSource>> PeerRangeSource::Create(
    PeerRangeSourceOptions options, const core::Clock& clock) {
  if (options.endpoint.empty() || options.max_concurrency == 0) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "peer source needs an endpoint and a positive max_concurrency");
  }
  if (options.token_key && !IsValidPeerTokenAudience(options.endpoint)) {
    return core::MakeError(
        core::ErrorCode::kInvalidArgument,
        fmt::format("peer endpoint {:?} cannot be a token audience", options.endpoint));
  }
  core::ClientOptions client;
  client.tls = options.tls;
  client.max_connections_per_origin = options.max_concurrency;
  client.max_idle_per_origin = options.max_concurrency;
  client.connect_timeout = options.connect_timeout;
  client.read_timeout = options.stall_timeout;
  client.retry.max_attempts = 1;
  client.user_agent = "modelplane-peer";
  auto created = core::HttpClient::Create(std::move(client));
  if (!created) return std::unexpected(created.error().Wrap("peer source " + options.endpoint));
  return std::unique_ptr<PeerRangeSource>(
      new PeerRangeSource(std::move(options), clock, std::move(*created)));
}

PeerRangeSource::PeerRangeSource(PeerRangeSourceOptions options, const core::Clock& clock,
                                 std::unique_ptr<core::HttpClient> client)
    : options_(std::move(options)),
      clock_(clock),
      name_(fmt::format("{}/{}", core::api::kTierPeer, options_.endpoint)),
      base_url_(fmt::format("{}://{}", options_.tls ? "https" : "http", options_.endpoint)),
      client_(std::move(client)),
      holding_(std::make_shared<const PeerHolding>(options_.holding)),
      ticket_(std::make_shared<const PeerTicketHolding>(options_.ticket)) {}

void PeerRangeSource::SetTicket(PeerTicketHolding ticket) {
  auto shared = std::make_shared<const PeerTicketHolding>(std::move(ticket));
  std::lock_guard lock(holding_mutex_);
  ticket_ = std::move(shared);
}

void PeerRangeSource::SetHolding(PeerHolding holding) {
  auto shared = std::make_shared<const PeerHolding>(std::move(holding));
  std::lock_guard lock(holding_mutex_);
  holding_ = std::move(shared);
}

bool PeerRangeSource::MayHold(const core::Sha256Bytes& blob) const {
  std::lock_guard lock(holding_mutex_);
  return holding_->everything || holding_->ready.contains(blob) || holding_->staging.contains(blob);
}

bool PeerRangeSource::MayHoldLater(const core::Sha256Bytes& blob) const {
  std::lock_guard lock(holding_mutex_);
  return !holding_->everything && !holding_->ready.contains(blob) &&
         holding_->staging.contains(blob);
}

std::string_view PeerRangeSource::tier() const {
  return core::api::kTierPeer;
}

core::Status PeerRangeSource::ReadRange(const SourceFile& file, std::uint64_t offset,
                                        std::span<std::byte> destination,
                                        const ReadContext& context) {
  if (destination.empty()) return core::Ok();
  if (offset > file.size || destination.size() > file.size - offset) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("range {}+{} outside {} ({} bytes)", offset,
                                       destination.size(), file.path, file.size));
  }
  const auto cancelled = [&] { return context.cancel != nullptr && context.cancel->cancelled(); };
  const auto past_deadline = [&] { return context.Now() >= context.deadline; };
  if (cancelled()) return core::MakeError(core::ErrorCode::kCancelled, "peer read cancelled");

  const auto remaining =
      context.deadline == core::Clock::SteadyTime::max()
          ? options_.stall_timeout
          : std::chrono::duration_cast<milliseconds>(context.deadline - context.Now());
  if (remaining < kMinimumTimeout) {
    return core::MakeError(core::ErrorCode::kDeadlineExceeded,
                           fmt::format("deadline passed before reading {}", file.path));
  }

  const std::string path = PeerBlobPath(file.sha256);
  core::ClientRequest request;
  request.url = base_url_ + path;
  request.range_first = offset;
  request.range_last = offset + destination.size() - 1;
  request.read_timeout = std::min(options_.stall_timeout, remaining);
  request.connect_timeout = std::min(options_.connect_timeout, remaining);
  request.cancel = context.cancel;
  request.clock = context.clock;
  if (context.first_byte != nullptr) {
    request.on_head = [first_byte = context.first_byte] { *first_byte = SteadyClock::now(); };
  }
  if (options_.token_key) {
    request.headers.set(
        boost::beast::http::field::authorization,
        SignPeerToken(*options_.token_key,
                      {.audience = options_.endpoint, .method = "GET", .path = path},
                      clock_.WallNow() + options_.token_lifetime));
  }

  std::shared_ptr<const PeerTicketHolding> ticket;
  {
    std::lock_guard lock(holding_mutex_);
    ticket = ticket_;
  }
  if (!ticket->ticket.empty() && ticket->files) {
    if (const auto proof = ticket->files->ProofOf(file.sha256)) {
      request.headers.set(std::string(core::kPeerTicketHeader), ticket->ticket);
      request.headers.set(std::string(core::kPeerProofHeader), core::FormatFileSetProof(*proof));
    }
  }

  std::size_t filled = 0;
  const core::BodySink sink = [&](std::span<const std::byte> piece) -> core::Status {
    if (piece.size() > destination.size() - filled) {
      return core::MakeError(core::ErrorCode::kDataLoss, "peer sent more bytes than asked");
    }
    // Pieces read straight into `destination` (lent below) are in place already.
    if (piece.data() != destination.data() + filled) {
      std::memcpy(destination.data() + filled, piece.data(), piece.size());
    }
    filled += piece.size();
    if (cancelled()) return core::MakeError(core::ErrorCode::kCancelled, "peer read cancelled");
    if (filled < destination.size() && past_deadline()) {
      return core::MakeError(core::ErrorCode::kDeadlineExceeded, "peer read passed its deadline");
    }
    return core::Ok();
  };
  auto response = client_->FetchStream(request, sink, destination);
  if (!response) {
    const core::Error& error = response.error();
    // A stall that outlived a cancel ends as a timeout; the caller asked for the cancel.
    if (error.code() == core::ErrorCode::kDeadlineExceeded && cancelled()) {
      return core::MakeError(core::ErrorCode::kCancelled, "peer read cancelled");
    }
    return std::unexpected(error.Wrap(name_));
  }
  if (filled != destination.size()) {
    return core::MakeError(core::ErrorCode::kDataLoss,
                           fmt::format("{} sent {} of {} bytes of {} at {}", name_, filled,
                                       destination.size(), file.path, offset));
  }
  return core::Ok();
}

}  // namespace modelplane::agent
