// Hollow node agents, as kubemark's hollow nodes: many real agent control loops in one process
// (NodeController with its informers, status writes and pod verdicts, the real Stager, fetch
// engine and cache store) whose only model is the network: each node reads its files from a
// ModelledSource at a modelled rate. They load the real kube-apiserver of e2e/cluster.sh as
// that many agents would (bench/hollow/run.sh measures what it costs it per node).
//
//   hollow_agents revision --name NAME --namespace NS --files N --file-size BYTES --nodes N
//                          --endpoint URL --bucket B      print a ModelRevision (JSON)
//   hollow_agents run --kubeconfig FILE --first I --count N --cache-root DIR --rate BYTES/S
//                     --endpoint URL --bucket B           agents for gpu-node-I .. I+N-1
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/hollow/modelled_source.h"
#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/log/log_level.h"
#include "core/log/logger.h"
#include "core/policy/source_policy.h"
#include "core/runtime/kube_connection.h"
#include "node-agent/controller/node_controller.h"
#include "node-agent/controller/stager.h"
#include "node-agent/fetch/fetch_engine.h"
#include "node-agent/fetch/source_health.h"
#include "node-agent/possession/possession_ledger.h"
#include "node-agent/possession/possession_prover.h"
#include "node-agent/store/cache_store.h"

namespace modelplane::bench {
namespace {

struct Settings {
  std::string kubeconfig;
  int first = 0;
  int count = 1;
  std::string cache_root = "/tmp/hollow-agents";
  std::uint64_t rate = 1 << 20;
  std::string endpoint;
  std::string bucket = "models";
  double qps = 5;
  int burst = 10;
  int status_interval_ms = 1000;
  std::string log_level = "warn";
};

// One hollow node: everything an agent's control loop has, nothing that serves pods. The
// agents share one API client and watcher (a client's TLS contexts and pools are most of an
// idle agent's memory); its token bucket is the sum of theirs, so the API server sees the
// requests a fleet of separate agents would send.
struct HollowAgent {
  std::unique_ptr<agent::CacheStore> store;
  std::unique_ptr<agent::SourceHealth> health;
  std::unique_ptr<agent::FetchEngine> engine;
  std::unique_ptr<agent::NodeController> controller;
  std::unique_ptr<agent::Stager> stager;
  std::unique_ptr<agent::PossessionLedger> ledger;
  std::unique_ptr<agent::PossessionProver> prover;
};

core::SourcePolicy PolicyFor(const Settings& settings) {
  return core::SourcePolicy{.object_stores = {{.endpoint = settings.endpoint,
                                               .buckets = {settings.bucket},
                                               .node_credentials = true,
                                               .addresses = {"127.0.0.0/8"}}}};
}

core::Result<std::unique_ptr<HollowAgent>> StartAgent(const Settings& settings, int index,
                                                      core::KubeConnection& connection,
                                                      const core::Clock& clock,
                                                      const core::Logger& logger,
                                                      core::CancellationToken& stop) {
  auto agent = std::make_unique<HollowAgent>();
  const std::string node = "gpu-node-" + std::to_string(index);
  const std::filesystem::path root = std::filesystem::path(settings.cache_root) / node;
  auto store = agent::CacheStore::Open(
      {.root = root, .capacity_bytes = 1ull << 30, .headroom_bytes = 0, .allow_direct_io = false});
  if (!store) return std::unexpected(store.error());
  agent->store = std::move(*store);
  agent->health = std::make_unique<agent::SourceHealth>(clock, std::chrono::minutes(5));
  auto engine = agent::FetchEngine::Create({.range_size = 64 << 10,
                                            .max_in_flight = 1,
                                            .files_in_flight = 1,
                                            .buffer_pool_bytes = 64 << 10},
                                           {.store = agent->store.get(),
                                            .health = agent->health.get(),
                                            .logger = &logger,
                                            .clock = &clock});
  if (!engine) return std::unexpected(engine.error());
  agent->engine = std::move(*engine);
  const std::string zone = index % 2 == 0 ? "zone-a" : "zone-b";  // as e2e/cluster.sh labels
  agent->controller = std::make_unique<agent::NodeController>(
      agent::NodeController::Dependencies{.client = *connection.client,
                                          .watcher = *connection.watcher,
                                          .store = *agent->store,
                                          .logger = logger,
                                          .clock = clock},
      agent::NodeControllerOptions{
          .node_name = node,
          .zone = zone,
          // Advertised, never dialed: the hollow data plane reads no peer.
          .peer_endpoint = "127.0.0.2:" + std::to_string(20000 + index),
          .status_interval = std::chrono::milliseconds(settings.status_interval_ms),
          .source_policy = PolicyFor(settings)});
  const std::uint64_t rate = settings.rate;
  const agent::SourceFactory sources = [rate](const agent::LoadedRevision&)
      -> core::Result<std::vector<std::unique_ptr<agent::RangeSource>>> {
    std::vector<std::unique_ptr<agent::RangeSource>> made;
    made.push_back(std::make_unique<ModelledSource>("objectStore/modelled", rate));
    return made;
  };
  agent->stager = std::make_unique<agent::Stager>(
      agent::Stager::Dependencies{
          .engine = agent->engine.get(),
          .sources = sources,
          .logger = &logger,
          .clock = &clock,
          .on_change = [controller = agent->controller.get()] { controller->Poke(); }},
      1);
  agent->controller->SetStager(agent->stager.get());
  // As the real agent: held bytes serve a revision once its own sources were shown to serve them
  // (a staging from the modelled origin shows it, so no proof reads in a rollout).
  auto ledger =
      agent::PossessionLedger::Open(agent->store->layout().PossessionLedgerPath(), &logger);
  if (!ledger) return std::unexpected(ledger.error());
  agent->ledger = std::move(*ledger);
  agent->prover = std::make_unique<agent::PossessionProver>(agent::PossessionProver::Dependencies{
      .sources = sources,
      .catalog = agent->store.get(),
      .ledger = agent->ledger.get(),
      .logger = &logger,
      .clock = &clock,
      .on_change = [controller = agent->controller.get()] { controller->Poke(); }});
  agent->controller->SetPossession(agent->ledger.get(), agent->prover.get());
  if (!agent->controller->Start(stop)) {
    return std::unexpected(core::Error(core::ErrorCode::kCancelled, "stopped while starting"));
  }
  return agent;
}

nlohmann::json Revision(const std::string& name, const std::string& ns, int files,
                        std::uint64_t file_size, int nodes, const std::string& endpoint,
                        const std::string& bucket) {
  nlohmann::json list = nlohmann::json::array();
  for (int i = 0; i < files; ++i) {
    const std::string path = "model-" + std::to_string(i + 1) + ".safetensors";
    list.push_back({{"path", path},
                    {"size", file_size},
                    {"sha256", ModelledDigest(path, file_size)},
                    {"role", "weights"}});
  }
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelRevision"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"modelName", "bench/hollow"},
            {"repositoryRevision", name},
            {"format", "safetensors"},
            {"engine", {{"name", "vllm"}, {"version", "0.11.0"}}},
            {"sources",
             {{{"name", "s3"},
               {"type", "objectStore"},
               {"objectStore",
                {{"endpoint", endpoint},
                 {"bucket", bucket},
                 {"prefix", name + "/"},
                 {"region", "us-east-1"}}}}}},
            {"files", list},
            {"prestage", {{"nodes", nodes}}}}}};
}

int Run(const Settings& settings) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts: sigwait below
  auto level = core::ParseLogLevel(settings.log_level);
  if (!level) return 2;
  auto logger = core::Logger::Create({.component = "hollow-agents", .level = *level});
  if (!logger) return 2;
  const core::SystemClock clock;
  core::CancellationToken stop;
  auto connection = core::ConnectToKubernetes({.kubeconfig = settings.kubeconfig,
                                               .qps = settings.qps * settings.count,
                                               .burst = settings.burst * settings.count},
                                              clock, &stop);
  if (!connection) {
    std::fprintf(stderr, "hollow_agents_failed error=%s\n", connection.error().ToString().c_str());
    return 1;
  }
  std::vector<std::unique_ptr<HollowAgent>> agents(static_cast<std::size_t>(settings.count));
  std::mutex failure_mutex;
  std::optional<core::Error> failure;
  // Started several at a time: each waits for its informers to sync.
  constexpr int kStarters = 16;
  std::vector<std::thread> starters;
  for (int worker = 0; worker < kStarters; ++worker) {
    starters.emplace_back([&, worker] {
      for (int i = worker; i < settings.count; i += kStarters) {
        auto agent = StartAgent(settings, settings.first + i, *connection, clock, *logger, stop);
        if (!agent) {
          const std::lock_guard lock(failure_mutex);
          if (!failure) failure = agent.error();
          return;
        }
        agents[static_cast<std::size_t>(i)] = std::move(*agent);
      }
    });
  }
  for (std::thread& starter : starters) starter.join();
  if (failure) {
    std::fprintf(stderr, "hollow_agents_failed error=%s\n", failure->ToString().c_str());
    return 1;
  }
  std::printf("hollow_agents_started count=%d\n", settings.count);
  std::fflush(stdout);
  int signal = 0;
  sigwait(&signals, &signal);
  stop.Cancel();
  for (auto& agent : agents) {
    agent->controller->Stop();
    agent->stager->Stop();
    agent->prover->Stop();
  }
  return 0;
}

}  // namespace
}  // namespace modelplane::bench

int main(int argc, char** argv) {
  using modelplane::bench::Settings;
  CLI::App app{"hollow node agents"};
  app.require_subcommand(1);
  Settings settings;
  auto* run = app.add_subcommand("run", "run hollow agents until SIGTERM");
  run->add_option("--kubeconfig", settings.kubeconfig)->required();
  run->add_option("--first", settings.first);
  run->add_option("--count", settings.count);
  run->add_option("--cache-root", settings.cache_root);
  run->add_option("--rate", settings.rate, "modelled bytes/s each node reads");
  run->add_option("--endpoint", settings.endpoint)->required();
  run->add_option("--bucket", settings.bucket);
  run->add_option("--qps", settings.qps, "each agent's share of the shared client's bucket");
  run->add_option("--burst", settings.burst, "each agent's share of its burst");
  run->add_option("--status-interval-ms", settings.status_interval_ms);
  run->add_option("--log-level", settings.log_level, "info logs every status write's reason");
  std::string name = "hollow";
  std::string ns = "models";
  int files = 2;
  std::uint64_t file_size = 1 << 20;
  int nodes = 1;
  auto* revision = app.add_subcommand("revision", "print a ModelRevision of modelled files");
  revision->add_option("--name", name);
  revision->add_option("--namespace", ns);
  revision->add_option("--files", files);
  revision->add_option("--file-size", file_size);
  revision->add_option("--nodes", nodes);
  revision->add_option("--endpoint", settings.endpoint)->required();
  revision->add_option("--bucket", settings.bucket);
  CLI11_PARSE(app, argc, argv);
  if (*revision) {
    std::cout << modelplane::bench::Revision(name, ns, files, file_size, nodes, settings.endpoint,
                                             settings.bucket)
                     .dump()
              << "\n";
    return 0;
  }
  return modelplane::bench::Run(settings);
}
