#include "core/kube/kube_tls.h"

namespace modelplane::core {

void ConfigureKubeTls(const KubeConfig& config, boost::asio::ssl::context& context) {
  if (!config.certificate_authority_pem.empty()) {
    context.add_certificate_authority(boost::asio::buffer(config.certificate_authority_pem));
  } else {
    context.set_default_verify_paths();
  }
  if (!config.client_certificate_pem.empty()) {
    context.use_certificate_chain(boost::asio::buffer(config.client_certificate_pem));
    context.use_private_key(boost::asio::buffer(config.client_key_pem),
                            boost::asio::ssl::context::pem);
  }
}

Result<ServerAddress> ParseServerAddress(const std::string& server) {
  ServerAddress address;
  std::string rest;
  if (server.starts_with("https://")) {
    rest = server.substr(8);
  } else if (server.starts_with("http://")) {
    address.tls = false;
    rest = server.substr(7);
  } else {
    return MakeError(ErrorCode::kInvalidArgument, "server URL must start with http(s)://");
  }
  if (auto slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  address.port = address.tls ? "443" : "80";
  if (rest.starts_with('[')) {
    const auto close = rest.find(']');
    if (close == std::string::npos) {
      return MakeError(ErrorCode::kInvalidArgument, "unterminated IPv6 address in " + server);
    }
    address.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') address.port = rest.substr(close + 2);
  } else if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    address.host = rest.substr(0, colon);
    address.port = rest.substr(colon + 1);
  } else {
    address.host = rest;
  }
  if (address.host.empty() || address.port.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "server URL has no host or port: " + server);
  }
  return address;
}

}  // namespace modelplane::core
