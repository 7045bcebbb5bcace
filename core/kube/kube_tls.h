// Applies a KubeConfig's TLS material (cluster CA, client certificate and key) to an Asio SSL
// context; shared by the REST client and the watch stream so both trust the same things.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include "core/kube/kube_config.h"

namespace modelplane::core {

// Throws boost::system::system_error on unusable PEM text (callers convert it at their edge).
void ConfigureKubeTls(const KubeConfig& config, boost::asio::ssl::context& context);

struct ServerAddress {
  bool tls = true;
  std::string host;  // without brackets
  std::string port;
};

// Splits "https://host:port" (IPv6 in brackets allowed); the port defaults by scheme.
[[nodiscard]] Result<ServerAddress> ParseServerAddress(const std::string& server);

}  // namespace modelplane::core
