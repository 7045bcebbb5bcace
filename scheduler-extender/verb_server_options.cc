#include "scheduler-extender/verb_server_options.h"

namespace modelplane::extender {
namespace {

core::LogLevel ToLogLevel(core::HttpLogLevel level) {
  switch (level) {
    case core::HttpLogLevel::kDebug: return core::LogLevel::kDebug;
    case core::HttpLogLevel::kInfo: return core::LogLevel::kInfo;
    case core::HttpLogLevel::kWarning: return core::LogLevel::kWarn;
    case core::HttpLogLevel::kError: return core::LogLevel::kError;
  }
  return core::LogLevel::kInfo;
}

}  // namespace

core::Result<core::ServerOptions> VerbServerOptions(const ExtenderServerConfig& config,
                                                    const std::optional<std::string>& pod_ip,
                                                    const core::Logger& logger) {
  if (auto valid = ValidateServerConfig(config); !valid) return std::unexpected(valid.error());
  auto address = ListenAddress(config, pod_ip);
  if (!address) return std::unexpected(address.error());
  core::ServerOptions options;
  options.address = std::move(*address);
  options.port = config.port;
  options.threads = config.threads;
  options.body_limit = config.body_limit.bytes;
  options.body_timeout = config.body_timeout;
  options.max_concurrent_bodies = config.max_concurrent_bodies;
  if (config.tls.Enabled()) {
    options.tls = core::TlsServerOptions{.certificate_chain_file = config.tls.certificate_file,
                                         .private_key_file = config.tls.private_key_file,
                                         .client_ca_file = config.tls.client_ca_file,
                                         .require_client_certificate = true};
  }
  // Refusals the server makes itself (413, 503 for too many bodies, failed handshakes) are
  // logged as the extender's own.
  options.log = [logger](core::HttpLogLevel level, std::string_view event,
                         std::string_view fields) {
    logger.Log(ToLogLevel(level), event, {{"http", fields}});
  };
  return options;
}

ExtenderService::Options VerbServiceOptions(const ExtenderServerConfig& config) {
  ExtenderService::Options options;
  options.limits.max_bytes = config.body_limit.bytes;
  options.limits.max_nodes = config.max_nodes;
  options.client_names = config.tls.client_names;
  return options;
}

}  // namespace modelplane::extender
