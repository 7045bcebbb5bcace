#include "core/http/http_server.h"

#include <atomic>
#include <csignal>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "core/http/server_connection.h"
#include "core/http/tls_context.h"

namespace modelplane::core {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

// After a failed accept (EMFILE, ENOBUFS, ...) the listener pauses so it does not spin.
constexpr std::chrono::milliseconds kAcceptBackoff{50};
// What Stop() waits, after forcing connections closed, for their coroutines to unwind.
constexpr std::chrono::milliseconds kForcedCloseWait{2000};

constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

void AddBuiltinRoutes(const ServerOptions& options, Router& router) {
  router.Handle(http::verb::get, "/healthz", [](const ServerRequest&) {
    return ServerResponse::Text(http::status::ok, "ok\n");
  });
  router.Handle(http::verb::get, "/readyz", [readiness = options.readiness](const ServerRequest&) {
    const bool ready = !readiness || readiness();
    return ready ? ServerResponse::Text(http::status::ok, "ready\n")
                 : ServerResponse::Text(http::status::service_unavailable, "not ready\n");
  });
  router.Handle(http::verb::get, "/metrics", [metrics = options.metrics](const ServerRequest&) {
    return ServerResponse::Text(http::status::ok, metrics ? metrics() : std::string(),
                                kPrometheusContentType);
  });
}

}  // namespace

class HttpServer::Impl {
 public:
  // One io_context per thread, each run by its thread alone, and connections dealt out among
  // them: with one io_context shared by several threads, every completion woke another thread
  // (a futex signal and a context switch per TLS record; half the TLS server's CPU time).
  Impl(ServerOptions options, Router router) : shared_(std::move(options), std::move(router)) {
    const int threads = std::max(1, shared_.options.threads);
    for (int i = 0; i < threads; ++i) {
      io_contexts_.push_back(std::make_unique<net::io_context>(1));
      idle_guards_.emplace_back(net::make_work_guard(*io_contexts_.back()));
    }
    acceptor_ = std::make_unique<tcp::acceptor>(net::make_strand(*io_contexts_.front()));
  }

  ~Impl() {
    Stop();
    // Coroutine frames still queued unregister from shared_ as they are destroyed, so the
    // io objects go first, while everything they refer to is alive.
    acceptor_.reset();
    idle_guards_.clear();
    io_contexts_.clear();
  }

  Status Listen() {
    error_code error;
    const auto address = net::ip::make_address(shared_.options.address, error);
    if (error) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "bad listen address " + shared_.options.address);
    }
    const tcp::endpoint endpoint(address, shared_.options.port);
    acceptor_->open(endpoint.protocol(), error);
    if (!error) acceptor_->set_option(net::socket_base::reuse_address(true), error);
    if (!error) acceptor_->bind(endpoint, error);
    if (!error) acceptor_->listen(net::socket_base::max_listen_connections, error);
    if (error) {
      return MakeError(ErrorCode::kUnavailable,
                       fmt::format("listening on {}:{}: {}", shared_.options.address,
                                   shared_.options.port, error.message()));
    }
    port_ = acceptor_->local_endpoint().port();
    return Ok();
  }

  Status LoadTls() {
    if (!shared_.options.tls) return Ok();
    auto context = MakeServerTlsContext(*shared_.options.tls);
    if (!context) return std::unexpected(context.error());
    shared_.ReplaceTls(std::move(*context));
    return Ok();
  }

  void Start() {
    net::co_spawn(acceptor_->get_executor(), AcceptLoop(), net::detached);
    threads_.reserve(io_contexts_.size());
    for (auto& context : io_contexts_) {
      threads_.emplace_back([context = context.get()] { context->run(); });
    }
    shared_.Log(HttpLogLevel::kInfo, "server_started",
                fmt::format("address={} port={} threads={} tls={}", shared_.options.address, port_,
                            io_contexts_.size(), shared_.tls != nullptr));
  }

  void Stop() {
    std::lock_guard lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    shared_.stopping = true;
    const auto open = shared_.registry.BeginStop();
    net::post(acceptor_->get_executor(), [this] {
      error_code ignored;
      acceptor_->close(ignored);
    });
    for (const auto& connection : open) connection->RequestStop(false);
    const auto grace_end = std::chrono::steady_clock::now() + shared_.options.stop_grace;
    if (!shared_.registry.WaitEmpty(grace_end)) {
      shared_.Log(HttpLogLevel::kWarning, "stop_grace_expired",
                  fmt::format("open_connections={}", shared_.registry.size()));
      for (const auto& connection : shared_.registry.Snapshot()) connection->RequestStop(true);
      (void)shared_.registry.WaitEmpty(std::chrono::steady_clock::now() + kForcedCloseWait);
    }
    for (auto& context : io_contexts_) context->stop();
    for (auto& thread : threads_) thread.join();
    threads_.clear();
    // The posted close may not have run before stop(); no thread touches the acceptor now.
    error_code ignored;
    acceptor_->close(ignored);
    shared_.Log(HttpLogLevel::kInfo, "server_stopped", fmt::format("port={}", port_));
  }

  std::uint16_t port() const { return port_; }

  ServerStats stats() {
    return {accepted_.load(), shared_.registry.size(), shared_.requests.load(),
            shared_.refused_busy.load()};
  }

 private:
  net::awaitable<void> AcceptLoop() {
    net::steady_timer backoff(acceptor_->get_executor());
    while (!shared_.stopping) {
      error_code error;
      try {
        net::io_context& context = *io_contexts_[next_id_ % io_contexts_.size()];
        tcp::socket socket(net::make_strand(context));
        co_await acceptor_->async_accept(socket, net::redirect_error(net::use_awaitable, error));
        if (shared_.stopping) break;
        if (!error) {
          ++accepted_;
          http_internal::StartConnection(std::move(socket), shared_, next_id_++);
          continue;
        }
      } catch (const std::exception& exception) {
        shared_.Log(HttpLogLevel::kError, "accept_failed",
                    fmt::format("error=\"{}\"", exception.what()));
      }
      if (error) {
        shared_.Log(
            HttpLogLevel::kWarning, "accept_failed",
            fmt::format("error=\"{}\" backoff_ms={}", error.message(), kAcceptBackoff.count()));
      }
      backoff.expires_after(kAcceptBackoff);
      co_await backoff.async_wait(net::redirect_error(net::use_awaitable, error));
    }
  }

  http_internal::ServerShared shared_;
  std::vector<std::unique_ptr<net::io_context>> io_contexts_;
  // Keep each thread's run() going while its io_context has no connection.
  std::vector<net::executor_work_guard<net::io_context::executor_type>> idle_guards_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  std::vector<std::thread> threads_;
  std::uint16_t port_ = 0;
  std::uint64_t next_id_ = 0;  // only the accept loop touches it
  std::atomic<std::uint64_t> accepted_{0};
  std::mutex stop_mutex_;
  bool stopped_ = false;
};

Result<std::unique_ptr<HttpServer>> HttpServer::Create(ServerOptions options, Router router) {
  if (options.threads < 1 || options.stream_chunk_size == 0 || options.max_connections == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "threads, stream_chunk_size and max_connections must be positive");
  }
  if (options.use_sendfile) {
    // sendfile(2) has no MSG_NOSIGNAL: a client that disconnects mid-body would raise SIGPIPE
    // and kill the whole process (a node agent, because one peer went away). Socket writes
    // through Asio already pass MSG_NOSIGNAL; this covers the zero-copy path.
    std::signal(SIGPIPE, SIG_IGN);
  }
  AddBuiltinRoutes(options, router);
  auto impl = std::make_unique<Impl>(std::move(options), std::move(router));
  if (auto status = impl->LoadTls(); !status) return std::unexpected(status.error());
  if (auto status = impl->Listen(); !status) return std::unexpected(status.error());
  impl->Start();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;
std::uint16_t HttpServer::port() const {
  return impl_->port();
}
ServerStats HttpServer::stats() const {
  return impl_->stats();
}
void HttpServer::Stop() {
  impl_->Stop();
}
Status HttpServer::ReloadTls() {
  if (auto status = impl_->LoadTls(); !status)
    return std::unexpected(status.error().Wrap("reloading TLS"));
  return Ok();
}

}  // namespace modelplane::core
