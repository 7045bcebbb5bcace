#include "core/pki/peer_ticket.h"

#include <algorithm>
#include <charconv>

#include "core/text/base64.h"
#include "core/text/hex.h"

namespace modelplane::core {
namespace {

constexpr std::string_view kVersion = "v1";
constexpr std::string_view kContext = "peer-ticket-v1";

bool IsAlphanumeric(char character) {
  return (character >= 'a' && character <= 'z') || (character >= '0' && character <= '9');
}

// A Node's name is a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253,
// beginning and ending with a letter or digit. Nothing else can reach a signed ticket.
bool IsNodeName(std::string_view name) {
  if (name.empty() || name.size() > 253 || !IsAlphanumeric(name.front()) ||
      !IsAlphanumeric(name.back())) {
    return false;
  }
  return std::ranges::all_of(name, [](char character) {
    return IsAlphanumeric(character) || character == '-' || character == '.';
  });
}

Error Refused(std::string_view why) {
  return Error(ErrorCode::kUnauthenticated, std::string("peer ticket: ") + std::string(why), false);
}

}  // namespace

Result<std::string> SignPeerTicket(const CertificateAuthority& authority,
                                   const PeerTicket& ticket) {
  if (!IsNodeName(ticket.node)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "peer ticket: '" + ticket.node + "' is not a node name");
  }
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(ticket.expires.time_since_epoch()).count();
  const std::string payload =
      ticket.node + "\n" + ToHex(ticket.files_root) + "\n" + std::to_string(seconds);
  auto signature = authority.SignStatement(kContext, payload);
  if (!signature) return std::unexpected(signature.error());
  return std::string(kVersion) + "." + EncodeBase64(payload) + "." + EncodeBase64(*signature);
}

Result<PeerTicket> ReadPeerTicket(const StatementVerifier& verifier, std::string_view text) {
  if (text.size() > kMaxPeerTicketBytes) return std::unexpected(Refused("too long"));
  const std::size_t first = text.find('.');
  const std::size_t second = first == std::string_view::npos ? first : text.find('.', first + 1);
  if (second == std::string_view::npos) {
    return std::unexpected(Refused("expected v1.<statement>.<signature>"));
  }
  if (text.substr(0, first) != kVersion) {
    return std::unexpected(Refused("version '" + std::string(text.substr(0, first).substr(0, 8)) +
                                   "' is not " + std::string(kVersion)));
  }
  auto payload = DecodeBase64(text.substr(first + 1, second - first - 1), "peer ticket");
  auto signature = DecodeBase64(text.substr(second + 1), "peer ticket signature");
  if (!payload || !signature) return std::unexpected(Refused("not base64"));
  // The signature first: nothing of an unsigned statement is read.
  if (!verifier.Verify(kContext, *payload, *signature)) {
    return std::unexpected(Refused("the signature does not verify with the peer CA"));
  }
  const std::size_t node_end = payload->find('\n');
  const std::size_t root_end =
      node_end == std::string::npos ? node_end : payload->find('\n', node_end + 1);
  if (root_end == std::string::npos) return std::unexpected(Refused("malformed statement"));
  PeerTicket ticket{.node = payload->substr(0, node_end)};
  const std::string_view root =
      std::string_view(*payload).substr(node_end + 1, root_end - node_end - 1);
  const std::string_view expiry = std::string_view(*payload).substr(root_end + 1);
  std::int64_t seconds = 0;
  const auto [end, error] = std::from_chars(expiry.data(), expiry.data() + expiry.size(), seconds);
  if (!IsNodeName(ticket.node) || root.size() != 64 || !DecodeHex(root, ticket.files_root) ||
      error != std::errc() || end != expiry.data() + expiry.size() || seconds <= 0) {
    return std::unexpected(Refused("malformed statement"));
  }
  ticket.expires = std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
  return ticket;
}

}  // namespace modelplane::core
