// How the verbs are served, from the server config: the HttpServer's options (address, TLS or
// mutual TLS, body limit, bodies in flight, deadlines, its log) and the service's (request
// bounds, allowed client names), so the binary and the tests build them the same way.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "core/error/error.h"
#include "core/http/server_options.h"
#include "core/log/logger.h"
#include "scheduler-extender/extender_config.h"
#include "scheduler-extender/extender_service.h"

namespace modelplane::extender {

// `pod_ip` is POD_IP from the environment, used when config.address is empty.
[[nodiscard]] core::Result<core::ServerOptions> VerbServerOptions(
    const ExtenderServerConfig& config, const std::optional<std::string>& pod_ip,
    const core::Logger& logger);

[[nodiscard]] ExtenderService::Options VerbServiceOptions(const ExtenderServerConfig& config);

}  // namespace modelplane::extender
