// A candidate process for the leader-election test: campaigns for a Lease and appends
// "started <ns>" / "stopped <ns>" lines (CLOCK_MONOTONIC, shared by all processes on the
// machine) to a log file. SIGTERM stops it cleanly (releasing the lease); the test also
// kill -9s it to simulate a crash.
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <thread>

#include <CLI/CLI.hpp>
#include <signal.h>

#include "core/kube/kube_client.h"
#include "core/kube/leader_elector.h"

namespace {

long long MonotonicNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

static int Run(int argc, char** argv) {
  using namespace modelplane::core;
  CLI::App app{"leader election probe"};
  std::string kubeconfig, lease_namespace, lease_name, identity, log_path;
  int lease_ms = 4000, renew_ms = 3000, retry_ms = 1000;
  app.add_option("--kubeconfig", kubeconfig)->required();
  app.add_option("--namespace", lease_namespace)->required();
  app.add_option("--lease", lease_name)->required();
  app.add_option("--identity", identity)->required();
  app.add_option("--log", log_path)->required();
  app.add_option("--lease-ms", lease_ms);
  app.add_option("--renew-ms", renew_ms);
  app.add_option("--retry-ms", retry_ms);
  CLI11_PARSE(app, argc, argv);

  // Block SIGTERM in every thread; one thread waits for it and stops the elector.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  SystemClock clock;
  auto config = LoadKubeconfigFile(kubeconfig);
  if (!config) {
    std::fprintf(stderr, "%s\n", config.error().ToString().c_str());
    return 1;
  }
  KubeClientOptions client_options;
  client_options.request_timeout = std::chrono::seconds(2);
  auto client = KubeClient::Create(*config, client_options, clock);
  if (!client) {
    std::fprintf(stderr, "%s\n", client.error().ToString().c_str());
    return 1;
  }
  std::mutex log_mutex;
  std::ofstream log(log_path, std::ios::app);
  auto note = [&](const char* what) {
    std::lock_guard lock(log_mutex);
    log << what << " " << MonotonicNanos() << std::endl;
  };
  LeaderElectionOptions options{.lease_namespace = lease_namespace,
                                .lease_name = lease_name,
                                .identity = identity,
                                .lease_duration = std::chrono::milliseconds(lease_ms),
                                .renew_deadline = std::chrono::milliseconds(renew_ms),
                                .retry_period = std::chrono::milliseconds(retry_ms)};
  LeaderCallbacks callbacks{.on_started_leading =
                                [&](CancellationToken& stop) {
                                  note("started");
                                  while (stop.SleepFor(clock, std::chrono::hours(1))) {
                                  }
                                },
                            .on_stopped_leading = [&](const std::string&) { note("stopped"); }};
  auto elector = LeaderElector::Create(**client, options, callbacks, clock);
  if (!elector) {
    std::fprintf(stderr, "%s\n", elector.error().ToString().c_str());
    return 1;
  }
  std::thread waiter([&] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    (*elector)->Stop();
  });
  note("campaigning");
  (*elector)->Run();
  note("exited");
  // Run returned on its own (lease lost): wake the signal waiter so the process can end.
  ::kill(::getpid(), SIGTERM);
  waiter.join();
  return 0;
}

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "leader election probe: %s\n", error.what());
    return 1;
  }
}
