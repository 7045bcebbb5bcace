#include "node-agent/csi/csi_server.h"

#include <fmt/format.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node-agent/store/durable_file.h"

namespace modelplane::agent {
namespace {

constexpr int kMaxRequestBytes = 4 << 20;
// sockaddr_un.sun_path is 108 bytes including the NUL.
constexpr std::size_t kMaxSocketPath = 107;

core::Status RemoveStaleSocket(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return core::Ok();
    return std::unexpected(ErrnoError(errno, "inspecting", path));
  }
  if (!S_ISSOCK(info.st_mode)) {
    return core::MakeError(
        core::ErrorCode::kAlreadyExists,
        fmt::format("{} exists and is not a socket; refusing to replace it", path.string()));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return std::unexpected(ErrnoError(errno, "removing the stale socket", path));
  }
  return core::Ok();
}

}  // namespace

core::Result<std::unique_ptr<CsiServer>> CsiServer::Start(
    CsiServerOptions options, const std::vector<grpc::Service*>& services,
    const core::Logger& logger) {
  const auto& path = options.socket_path;
  if (!path.is_absolute() || path.native().size() > kMaxSocketPath) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("the CSI socket path {:?} must be absolute and at most {} "
                                       "bytes",
                                       path.string(), kMaxSocketPath));
  }
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error) {
    return core::MakeError(
        core::ErrorCode::kIo,
        fmt::format("creating {}: {}", path.parent_path().string(), error.message()));
  }
  if (auto removed = RemoveStaleSocket(path); !removed) return std::unexpected(removed.error());

  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + path.string(), grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
  grpc::ResourceQuota quota("modelplane-csi");
  quota.SetMaxThreads(options.max_threads);
  builder.SetResourceQuota(quota);
  for (grpc::Service* service : services) builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    return core::MakeError(
        core::ErrorCode::kUnavailable,
        fmt::format("the CSI gRPC server could not listen on {}", path.string()));
  }
  // Only root (kubelet) talks to the plugin.
  ::chmod(path.c_str(), 0600);
  logger.Info("csi_server_listening", {{"socket", path.string()}});
  return std::unique_ptr<CsiServer>(new CsiServer(std::move(options), std::move(server), logger));
}

CsiServer::CsiServer(CsiServerOptions options, std::unique_ptr<grpc::Server> server,
                     const core::Logger& logger)
    : options_(std::move(options)), server_(std::move(server)), logger_(logger) {}

CsiServer::~CsiServer() {
  Stop();
}

void CsiServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // New calls are refused at once; calls in flight finish, or are cancelled at the deadline.
  server_->Shutdown(std::chrono::system_clock::now() + options_.shutdown_grace);
  server_->Wait();
  ::unlink(options_.socket_path.c_str());
  logger_.Info("csi_server_stopped", {{"socket", options_.socket_path.string()}});
}

}  // namespace modelplane::agent
