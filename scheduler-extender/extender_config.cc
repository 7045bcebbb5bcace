#include "scheduler-extender/extender_config.h"

namespace modelplane::extender {

using namespace std::chrono_literals;

namespace {

// "/scheduler" + "filter" -> "/scheduler/filter", as kube-scheduler joins urlPrefix and verb
// (it trims trailing slashes from the prefix, then adds one).
std::string JoinPath(const std::string& prefix, const std::string& verb) {
  std::string path = prefix;
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path + "/" + verb;
}

bool IsPathSegment(const std::string& text) {
  if (text.empty() || text.size() > 64) return false;
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

core::Status ValidateServerConfig(const ExtenderServerConfig& config) {
  if (!config.path_prefix.empty() && config.path_prefix.front() != '/') {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "pathPrefix must be empty or start with '/'");
  }
  if (!IsPathSegment(config.filter_verb) || !IsPathSegment(config.prioritize_verb)) {
    return core::MakeError(
        core::ErrorCode::kInvalidArgument,
        "filterVerb and prioritizeVerb must be 1-64 characters of [A-Za-z0-9._-]");
  }
  if (config.filter_verb == config.prioritize_verb) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "filterVerb and prioritizeVerb must differ");
  }
  const ExtenderTlsConfig& tls = config.tls;
  if (tls.certificate_file.empty() != tls.private_key_file.empty()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "tls.certFile and tls.keyFile must be set together");
  }
  if (!tls.Enabled() && !tls.client_ca_file.empty()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "tls.clientCAFile needs tls.certFile and tls.keyFile");
  }
  if (!tls.MutualTls() && !tls.client_names.empty()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "tls.clientNames needs tls.clientCAFile");
  }
  return core::Ok();
}

core::Result<std::string> ListenAddress(const ExtenderServerConfig& config,
                                        const std::optional<std::string>& pod_ip) {
  if (!config.address.empty()) return config.address;
  if (pod_ip && !pod_ip->empty()) return *pod_ip;
  return core::MakeError(core::ErrorCode::kInvalidArgument,
                         "server.address is empty and POD_IP is not set: set POD_IP (the "
                         "downward API's status.podIP) or an address, 0.0.0.0 for every one");
}

std::string ExtenderServerConfig::FilterPath() const {
  return JoinPath(path_prefix, filter_verb);
}

std::string ExtenderServerConfig::PrioritizePath() const {
  return JoinPath(path_prefix, prioritize_verb);
}

void BindConfig(core::ConfigMap& map, ExtenderTlsConfig& config) {
  map.Optional("certFile", config.certificate_file);
  map.Optional("keyFile", config.private_key_file);
  map.Optional("clientCAFile", config.client_ca_file);
  map.Optional("clientNames", config.client_names);
}

void BindConfig(core::ConfigMap& map, ExtenderServerConfig& config) {
  map.Optional("address", config.address);
  map.Optional("port", config.port);
  map.Optional("pathPrefix", config.path_prefix);
  map.Optional("filterVerb", config.filter_verb);
  map.Optional("prioritizeVerb", config.prioritize_verb);
  map.Optional("bodyLimit", config.body_limit,
               core::InRange(core::ByteSize{64ULL * 1024}, core::ByteSize{1ULL << 30}));
  map.Optional("maxNodes", config.max_nodes, core::InRange(1, 100'000));
  map.Optional("maxConcurrentBodies", config.max_concurrent_bodies, core::InRange(1, 1024));
  map.Optional("threads", config.threads, core::InRange(1, 64));
  map.Optional("bodyTimeout", config.body_timeout, core::InRange(100ms, 10min));
  map.Optional("tls", config.tls);
  if (auto valid = ValidateServerConfig(config); !valid) map.Fail(valid.error().message());
}

void BindConfig(core::ConfigMap& map, ExtenderConfig& config) {
  map.Optional("admin", config.admin);
  map.Optional("log", config.log);
  map.Optional("kubernetes", config.kubernetes);
  map.Optional("server", config.server);
}

}  // namespace modelplane::extender
