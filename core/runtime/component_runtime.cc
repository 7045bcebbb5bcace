#include "core/runtime/component_runtime.h"

#include <ctime>

#include <pthread.h>
#include <signal.h>

namespace modelplane::core {
namespace {

sigset_t ShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

}  // namespace

ComponentRuntime::ComponentRuntime(Logger logger, std::unique_ptr<MetricsRegistry> metrics)
    : logger_(std::move(logger)), metrics_(std::move(metrics)) {}

Result<std::unique_ptr<ComponentRuntime>> ComponentRuntime::Create(
    ComponentRuntimeOptions options) {
  const sigset_t signals = ShutdownSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto level = LogLevelFromEnvironment(options.log.level);
  if (!level) return std::unexpected(level.error().Wrap("log level"));
  auto format = ParseLogFormat(options.log.format);
  if (!format) return std::unexpected(format.error().Wrap("log format"));
  auto logger =
      Logger::Create({.component = options.component, .level = *level, .format = *format});
  if (!logger) return std::unexpected(logger.error());

  std::unique_ptr<ComponentRuntime> runtime(
      new ComponentRuntime(std::move(*logger), std::make_unique<MetricsRegistry>()));
  ServerOptions server;
  server.address = options.admin.address;
  server.port = options.admin.port;
  server.threads = 1;
  server.readiness = [raw = runtime.get()] { return raw->ready_.load(); };
  server.metrics = [raw = runtime.get()] { return raw->metrics_->ExposeText(); };
  auto admin = HttpServer::Create(std::move(server), Router{});
  if (!admin) return std::unexpected(admin.error().Wrap("starting the admin server"));
  runtime->admin_server_ = std::move(*admin);
  runtime->signal_thread_ = std::thread([raw = runtime.get()] { raw->WatchSignals(); });
  runtime->logger_.Info("admin_server_started",
                        {{"address", options.admin.address},
                         {"port", static_cast<std::int64_t>(runtime->admin_port())}});
  return runtime;
}

ComponentRuntime::~ComponentRuntime() {
  Stop();
}

void ComponentRuntime::WatchSignals() {
  const sigset_t signals = ShutdownSignals();
  // A bounded wait, so Stop() can end this thread without sending it a signal.
  const timespec poll{.tv_sec = 0, .tv_nsec = 200'000'000};
  while (!stopping_.load()) {
    const int received = sigtimedwait(&signals, nullptr, &poll);
    if (received == SIGTERM || received == SIGINT) {
      logger_.Info("shutdown_signal_received",
                   {{"signal", received == SIGTERM ? "SIGTERM" : "SIGINT"}});
      shutdown_.Cancel();
    }
  }
}

void ComponentRuntime::Stop() {
  if (stopping_.exchange(true)) return;
  ready_ = false;
  shutdown_.Cancel();
  if (admin_server_) admin_server_->Stop();
  if (signal_thread_.joinable()) signal_thread_.join();
  logger_.Info("stopped");
  logger_.Flush();
}

}  // namespace modelplane::core
