// What every modelplane binary needs around its own work: a logger, a metrics registry, the
// admin HTTP server (/metrics, /healthz, /readyz), a readiness flag, and a shutdown token that
// SIGTERM or SIGINT fires (Kubernetes stops pods with SIGTERM).
//
// Create() blocks SIGTERM and SIGINT in the calling thread before any other thread exists, so
// every later thread inherits the mask and only the runtime's signal thread receives them.
// Call it first in main. Thread safety: accessors may be used from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/http/http_server.h"
#include "core/log/logger.h"
#include "core/metrics/metrics_registry.h"
#include "core/runtime/runtime_config.h"

namespace modelplane::core {

struct ComponentRuntimeOptions {
  std::string component;  // "operator", "scheduler-extender", "node-agent"
  AdminConfig admin;
  LogConfig log;
};

class ComponentRuntime {
 public:
  [[nodiscard]] static Result<std::unique_ptr<ComponentRuntime>> Create(
      ComponentRuntimeOptions options);
  ComponentRuntime(const ComponentRuntime&) = delete;
  ComponentRuntime& operator=(const ComponentRuntime&) = delete;
  ~ComponentRuntime();  // Stop()

  [[nodiscard]] const Logger& logger() const { return logger_; }
  [[nodiscard]] MetricsRegistry& metrics() { return *metrics_; }
  [[nodiscard]] const Clock& clock() const { return clock_; }
  // Fires on SIGTERM/SIGINT or RequestShutdown().
  [[nodiscard]] CancellationToken& shutdown() { return shutdown_; }
  void RequestShutdown() { shutdown_.Cancel(); }

  // /readyz answers 200 only while ready; components set it once they can do their job.
  void SetReady(bool ready) { ready_.store(ready); }
  [[nodiscard]] std::uint16_t admin_port() const { return admin_server_->port(); }

  // Stops the admin server and the signal thread; idempotent.
  void Stop();

 private:
  ComponentRuntime(Logger logger, std::unique_ptr<MetricsRegistry> metrics);
  void WatchSignals();

  Logger logger_;
  std::unique_ptr<MetricsRegistry> metrics_;
  SystemClock clock_;
  CancellationToken shutdown_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> stopping_{false};
  std::unique_ptr<HttpServer> admin_server_;
  std::thread signal_thread_;
};

}  // namespace modelplane::core
