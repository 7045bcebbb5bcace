// extender_bench: what one scheduling decision of the extender costs at fleet scale.
//
// The inventory is filled the way the informers fill it (MakeRevisionInfo, MakeNodeCacheInfo)
// from a synthetic fleet (synthetic_fleet.h: 5,000 ModelCaches holding 5-20 revisions each in
// every state, 200 ModelRevisions in families sharing weight files). Pods name revisions by
// popularity; candidates are random subsets of the nodes, in random order, as kube-scheduler
// sends them. For each candidate count it measures, per request, p50/p99/max and requests/s:
//
//   decide   Decide(): FindCaches, HeldBytes for the candidates, Placement::Default(clock)
//            .Evaluate -- the decision the HTTP handler makes, nothing else
//   handler  ExtenderService::HandleFilter / HandlePrioritize on an in-memory request: parse the
//            ExtenderArgs body, decide, render the answer, log the decision line (to /dev/null)
//            and observe the histogram -- the whole handler without the socket
//   http     the real ExtenderService behind core::HttpServer on 127.0.0.1 (the binary's server
//            options, 4 threads), POSTs in the nodeNames form from 1 and 4 client threads
//            (core::HttpClient, keep-alive), back to back
//
// Besides wall-clock percentiles it reports CPU time per request (cpu_us: the measuring
// thread's, or for http the whole process's, clients included) and, in-process, percentiles of
// each request's own CPU time, which leave out the time other processes held the core on a
// shared machine. --breakdown times the steps of a decision (FindCaches / HeldBytes / Evaluate /
// parsing / rendering) in CPU time; --verify checks HeldBytes on every node against a recount
// from the API objects. One JSON object per result goes to stdout after the table; --json FILE
// appends them to FILE.
//
//   ninja -C build/bench extender_bench
//   bench/extender/run.sh            # this build and scheduler-extender at 65ef1df, to
//   results.jsonl build/bench/bench/extender/extender_bench --verify --breakdown [--seconds 5]
//   [--json FILE]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>
#include <time.h>

#include "bench/extender/synthetic_fleet.h"
#include "core/clock/clock.h"
#include "core/http/http_client.h"
#include "core/http/http_server.h"
#include "core/metrics/metrics_registry.h"
#include "scheduler-extender/extender_service.h"
#include "scheduler-extender/verb_server_options.h"

namespace {

using namespace modelplane;
using extender::CacheInventory;
using extender::ExtenderArgs;
using extender::Placement;
using nlohmann::json;
using Steady = std::chrono::steady_clock;
namespace http = boost::beast::http;

constexpr std::size_t kCandidateLists = 8;  // distinct candidate orders per size
constexpr std::size_t kTargets = 64;        // pods' revisions, drawn by popularity

struct Flags {
  std::size_t nodes = 5000;
  std::size_t revisions = 200;
  std::vector<std::size_t> candidates = {100, 1000, 5000};
  std::vector<std::size_t> clients = {1, 4};
  double seconds = 3;
  std::vector<std::string> modes = {"decide", "handler", "http"};
  bool breakdown = false;
  bool verify = false;
  std::string json_file;
  std::string label;
};

struct Stats {
  std::size_t count = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
  double mean_us = 0;
  double per_second = 0;
  double cpu_us = 0;  // CPU time per request: the measuring thread's, or the process's (http)
  // In-process modes: percentiles of each request's own CPU time (the thread's), which leaves
  // out the time other processes on the machine held the core.
  double cpu_p50_us = 0;
  double cpu_p99_us = 0;
};

// Nearest rank; `wall` is the time the requests took together (clients in parallel).
Stats Summarize(std::vector<double> micros, double wall_seconds) {
  Stats stats;
  if (micros.empty()) return stats;
  std::sort(micros.begin(), micros.end());
  auto rank = [&](double quantile) {
    const auto index =
        static_cast<std::size_t>(std::ceil(quantile * static_cast<double>(micros.size())));
    return micros[std::min(micros.size() - 1, index == 0 ? 0 : index - 1)];
  };
  stats.count = micros.size();
  stats.p50_us = rank(0.50);
  stats.p99_us = rank(0.99);
  stats.max_us = micros.back();
  double sum = 0;
  for (double value : micros) sum += value;
  stats.mean_us = sum / static_cast<double>(micros.size());
  stats.per_second = static_cast<double>(micros.size()) / wall_seconds;
  return stats;
}

double Micros(Steady::duration duration) {
  return std::chrono::duration<double, std::micro>(duration).count();
}

// CPU seconds of this thread, or of the whole process (every server and client thread).
double CpuSeconds(clockid_t clock) {
  timespec now{};
  ::clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

double Cpu() {
  return CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
}

// What Decide computes of every candidate: the bytes it holds of the revision's files through
// other digests and, but in the baseline, its entry for the revision's own digest.
#ifdef MODELPLANE_EXTENDER_BASELINE
// The extender before the per-request form (bench/extender/baseline.sh): one merge per node.
using Holding = std::int64_t;
std::vector<Holding> HoldingsOf(
    const CacheInventory& inventory, const extender::RevisionInfo& revision,
    const std::vector<std::shared_ptr<const extender::NodeCacheInfo>>& caches) {
  std::vector<std::int64_t> held(caches.size(), 0);
  for (std::size_t index = 0; index < caches.size(); ++index) {
    if (caches[index]) held[index] = inventory.HeldBytes(revision, *caches[index]);
  }
  return held;
}
std::int64_t HeldBytesOf(const Holding& holding) {
  return holding;
}
#else
using Holding = extender::NodeHolding;
std::vector<Holding> HoldingsOf(
    const CacheInventory& inventory, const extender::RevisionInfo& revision,
    const std::vector<std::shared_ptr<const extender::NodeCacheInfo>>& caches) {
  return inventory.Holdings(revision, caches);
}
std::int64_t HeldBytesOf(const Holding& holding) {
  return holding.held_bytes;
}
#endif

// What every run shares: the inventory, the revisions pods name, the candidate lists.
struct Workload {
  CacheInventory inventory;
  std::vector<std::string> targets;  // "namespace/name", by popularity, repeats allowed
  std::map<std::size_t, std::vector<std::vector<std::string>>> lists;  // by candidate count
};

std::string PodJson(const std::string& revision, std::size_t index) {
  // As kube-scheduler sends it (tests/scheduler-extender/testdata/filter_node_names.json).
  json pod = {{"metadata",
               {{"name", fmt::format("engine-{}", index)},
                {"namespace", "serving"},
                {"uid", fmt::format("7c1a9a52-2f55-4d0c-9d1e-{:012}", index)},
                {"resourceVersion", "4712"},
                {"creationTimestamp", "2026-11-29T20:00:01Z"},
                {"labels", {{"app", "engine"}, {"pod-template-hash", "5d8f7c9b6"}}},
                {"annotations", {{"modelplane.io/revision", revision}}}}},
              {"spec",
               {{"containers",
                 {{{"name", "engine"},
                   {"image", "registry.k8s.io/pause:3.10"},
                   {"resources", {{"limits", {{"nvidia.com/gpu", "8"}}}}}}}},
                {"schedulerName", "modelplane-scheduler"},
                {"priority", 0}}},
              {"status", {{"phase", "Pending"}}}};
  return pod.dump();
}

std::string Body(const std::string& revision, std::size_t index,
                 const std::vector<std::string>& nodes) {
  return fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":{}}})", PodJson(revision, index),
                     json(nodes).dump());
}

ExtenderArgs Args(const std::string& revision, const std::vector<std::string>& nodes) {
  ExtenderArgs args;
  args.pod.namespace_name = "serving";
  args.pod.name = "engine-0";
  args.pod.annotations["modelplane.io/revision"] = revision;
  args.node_names = nodes;
  return args;
}

void Print(const std::string& mode, const std::string& verb, std::size_t candidates,
           std::size_t clients, const Stats& stats, std::vector<json>& results) {
  fmt::print(
      "{:<8} {:<10} {:>6} {:>3} {:>8} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.0f} "
      "{:>10.1f} {:>10.1f}\n",
      mode, verb, candidates, clients, stats.count, stats.p50_us, stats.p99_us, stats.max_us,
      stats.mean_us, stats.cpu_us, stats.per_second, stats.cpu_p50_us, stats.cpu_p99_us);
  std::fflush(stdout);
  results.push_back({{"mode", mode},
                     {"verb", verb},
                     {"candidates", candidates},
                     {"clients", clients},
                     {"requests", stats.count},
                     {"p50_us", std::round(stats.p50_us * 10) / 10},
                     {"p99_us", std::round(stats.p99_us * 10) / 10},
                     {"max_us", std::round(stats.max_us * 10) / 10},
                     {"mean_us", std::round(stats.mean_us * 10) / 10},
                     {"cpu_us", std::round(stats.cpu_us * 10) / 10},
                     {"requests_per_second", std::round(stats.per_second)}});
  if (mode != "http") {
    results.back()["cpu_p50_us"] = std::round(stats.cpu_p50_us * 10) / 10;
    results.back()["cpu_p99_us"] = std::round(stats.cpu_p99_us * 10) / 10;
  }
}

// Runs `once(i)` back to back until `seconds` passed (at least 20 times), timing each call.
template <typename Once>
Stats TimeLoop(double seconds, Once once) {
  std::vector<double> micros;
  std::vector<double> cpu_micros;
  const auto started = Steady::now();
  const double cpu_started = Cpu();
  const auto until = started + std::chrono::duration<double>(seconds);
  for (std::size_t i = 0; micros.size() < 20 || Steady::now() < until; ++i) {
    const auto before = Steady::now();
    const double cpu_before = Cpu();
    once(i);
    cpu_micros.push_back((Cpu() - cpu_before) * 1e6);
    micros.push_back(Micros(Steady::now() - before));
  }
  const double cpu = Cpu() - cpu_started;
  const double wall = std::chrono::duration<double>(Steady::now() - started).count();
  Stats stats = Summarize(std::move(micros), wall);
  const Stats cpu_stats = Summarize(std::move(cpu_micros), wall);
  stats.cpu_us = cpu * 1e6 / static_cast<double>(std::max<std::size_t>(1, stats.count));
  stats.cpu_p50_us = cpu_stats.p50_us;
  stats.cpu_p99_us = cpu_stats.p99_us;
  return stats;
}

void RunDecide(const Flags& flags, Workload& work, std::vector<json>& results) {
  const core::SystemClock clock;
  const Placement placement = Placement::Default(clock);
  for (std::size_t count : flags.candidates) {
    std::vector<ExtenderArgs> args;
    for (const auto& list : work.lists[count]) args.push_back(Args("", list));
    std::int64_t checksum = 0;
    // A warm-up pass, then the measured loop.
    for (int pass = 0; pass < 2; ++pass) {
      const Stats stats = TimeLoop(pass == 0 ? 0.2 : flags.seconds, [&](std::size_t i) {
        ExtenderArgs& request = args[i % args.size()];
        request.pod.annotations["modelplane.io/revision"] = work.targets[i % work.targets.size()];
        const auto decision = extender::Decide(request, work.inventory, placement);
        checksum += decision.verdicts.empty() ? 0 : decision.verdicts.front().score;
      });
      if (pass == 1) Print("decide", "-", count, 1, stats, results);
    }
    if (checksum < 0) std::puts("");  // keeps the decisions observable
  }
}

// Where a decision's time goes: the steps Decide and the handler take, each timed in this
// thread's CPU time (wall time on a shared machine counts other processes' slices).
void RunBreakdown(const Flags& flags, Workload& work) {
  const core::SystemClock clock;
  const Placement placement = Placement::Default(clock);
  fmt::print(
      "\nbreakdown (mean CPU us per request): candidates find_caches held_bytes evaluate "
      "parse filter_render prioritize_render\n");
  for (std::size_t count : flags.candidates) {
    double find = 0, held_total = 0, evaluate = 0, parse = 0, filter = 0, prioritize = 0;
    std::size_t rounds = 0;
    std::size_t passed = 0;
    std::size_t verdicts = 0;
    const auto until = Steady::now() + std::chrono::duration<double>(flags.seconds);
    for (std::size_t i = 0; rounds < 20 || Steady::now() < until; ++i, ++rounds) {
      const auto& list = work.lists[count][i % kCandidateLists];
      const std::string& target = work.targets[i % work.targets.size()];
      const std::string body = Body(target, i, list);
      auto t0 = Cpu();
      auto args = extender::ParseExtenderArgs(body, {});
      auto t1 = Cpu();
      parse += (t1 - t0) * 1e6;
      if (!args) continue;
      const auto revision = work.inventory.FindRevision(target);
      t0 = Cpu();
      const auto caches = work.inventory.FindCaches(args->node_names);
      t1 = Cpu();
      const std::vector<Holding> holdings = HoldingsOf(work.inventory, *revision, caches);
      const auto t2 = Cpu();
      extender::PodDecision decision;
      decision.outcome = extender::PodDecision::Outcome::kPlaced;
      decision.verdicts = placement.Evaluate(*revision, args->node_names, caches, holdings);
      const auto t3 = Cpu();
      verdicts += decision.verdicts.size();
      for (const auto& verdict : decision.verdicts) passed += verdict.passed ? 1 : 0;
#ifdef MODELPLANE_EXTENDER_BASELINE
      const std::string filter_body =
          extender::FilterResultToJson(*args, extender::ToFilterResult(decision)).dump();
      const auto t4 = Cpu();
      const std::string prioritize_body =
          extender::HostPriorityListToJson(extender::ToHostPriorities(decision)).dump();
#else
      const std::string filter_body =
          extender::FilterResultBody(*args, extender::ToFilterResult(decision));
      const auto t4 = Cpu();
      const std::string prioritize_body =
          extender::HostPriorityListBody(extender::ToHostPriorities(decision));
#endif
      const auto t5 = Cpu();
      find += (t1 - t0) * 1e6;
      held_total += (t2 - t1) * 1e6;
      evaluate += (t3 - t2) * 1e6;
      filter += (t4 - t3) * 1e6;
      prioritize += (t5 - t4) * 1e6;
      if (filter_body.empty() || prioritize_body.empty()) std::puts("");
    }
    const auto n = static_cast<double>(rounds);
    fmt::print(
        "breakdown {:>6} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f}  ({:.0f}% "
        "of candidates passed the filter)\n",
        count, find / n, held_total / n, evaluate / n, parse / n, filter / n, prioritize / n,
        100.0 * static_cast<double>(passed) /
            static_cast<double>(std::max<std::size_t>(1, verdicts)));
  }
}

// HeldBytes as the API objects define it, counted the slow obvious way: the wanted revision's
// files that some other digest Ready on the node lists. Returns the mismatches.
std::size_t Verify(const bench::SyntheticFleet& fleet, const Workload& work) {
  std::map<std::string, const core::api::ModelRevision*> by_digest;
  std::map<std::string, const core::api::ModelRevision*> by_key;
  for (const auto& revision : fleet.revisions) {
    by_digest[revision.status->digest] = &revision;
    by_key[revision.metadata.namespace_name + "/" + revision.metadata.name] = &revision;
  }
  std::vector<std::string> nodes;
  for (const auto& cache : fleet.caches) nodes.push_back(cache.metadata.name);
  const auto caches = work.inventory.FindCaches(nodes);
  std::size_t mismatches = 0;
  std::size_t checked = 0;
  std::size_t holding = 0;
  for (const std::string& target :
       std::set<std::string>(work.targets.begin(), work.targets.end())) {
    const core::api::ModelRevision& wanted = *by_key.at(target);
    const auto info = work.inventory.FindRevision(target);
    const std::vector<Holding> holdings = HoldingsOf(work.inventory, *info, caches);
    for (std::size_t i = 0; i < fleet.caches.size(); ++i) {
      std::set<std::string> files;
      // The wanted digest's last entry (the baseline's holdings do not say).
      [[maybe_unused]] const core::api::CachedRevision* own = nullptr;
      if (fleet.caches[i].status) {
        for (const auto& cached : fleet.caches[i].status->revisions) {
          if (cached.digest == wanted.status->digest) own = &cached;
          if (cached.state != core::api::kCacheStateReady ||
              cached.digest == wanted.status->digest) {
            continue;
          }
          for (const auto& file : by_digest.at(cached.digest)->spec.files)
            files.insert(file.sha256);
        }
      }
      std::int64_t expected = 0;
      for (const auto& file : wanted.spec.files)
        expected += files.contains(file.sha256) ? file.size : 0;
      ++checked;
      holding += expected > 0 ? 1 : 0;
      if (HeldBytesOf(holdings[i]) != expected) ++mismatches;
#ifndef MODELPLANE_EXTENDER_BASELINE
      const extender::CachedRevisionInfo* entry = holdings[i].entry;
      if ((own == nullptr) != (entry == nullptr) ||
          (own != nullptr && (own->state != entry->state || own->bytes_done != entry->bytes_done ||
                              own->bytes_total != entry->bytes_total))) {
        ++mismatches;
      }
#endif
    }
  }
  fmt::print(
      "verify: HeldBytes (and the revision's own entry) on {} (revision, node) pairs, {} holding "
      "some files: {} mismatches\n",
      checked, holding, mismatches);
  return mismatches;
}

// The service as the binary builds it (verb_server_options.h), logging at info to /dev/null.
struct Service {
  core::MetricsRegistry metrics;
  extender::ExtenderServerConfig config;
  std::unique_ptr<extender::ExtenderService> service;
  std::unique_ptr<core::HttpServer> server;
};

std::unique_ptr<Service> StartService(const CacheInventory& inventory, const core::Clock& clock,
                                      bool listen) {
  auto out = std::make_unique<Service>();
  out->config.address = "127.0.0.1";
  out->config.port = 0;
  auto logger = core::Logger::Create({.component = "scheduler-extender",
                                      .level = core::LogLevel::kInfo,
                                      .sink = core::LogSink::File("/dev/null")});
  if (!logger) throw std::runtime_error(logger.error().ToString());
  auto service =
      extender::ExtenderService::Create(inventory, Placement::Default(clock), *logger, out->metrics,
                                        extender::VerbServiceOptions(out->config));
  if (!service) throw std::runtime_error(service.error().ToString());
  out->service = std::move(*service);
  out->service->SetSynced(true);
  if (!listen) return out;
  core::Router router;
  out->service->AddRoutes(router, out->config);
  auto options = extender::VerbServerOptions(out->config, std::nullopt, *logger);
  if (!options) throw std::runtime_error(options.error().ToString());
  auto server = core::HttpServer::Create(std::move(*options), std::move(router));
  if (!server) throw std::runtime_error(server.error().ToString());
  out->server = std::move(*server);
  return out;
}

// Request bodies per candidate count: each candidate list with several pods' revisions.
std::vector<std::string> Bodies(const Workload& work, std::size_t count) {
  std::vector<std::string> bodies;
  const auto& lists = work.lists.at(count);
  for (std::size_t i = 0; i < 4 * kCandidateLists; ++i) {
    bodies.push_back(Body(work.targets[i % work.targets.size()], i, lists[i % lists.size()]));
  }
  return bodies;
}

void RunHandler(const Flags& flags, Workload& work, std::vector<json>& results) {
  const core::SystemClock clock;
  const auto service = StartService(work.inventory, clock, false);
  for (std::size_t count : flags.candidates) {
    const auto bodies = Bodies(work, count);
    for (const std::string verb : {"filter", "prioritize"}) {
      for (int pass = 0; pass < 2; ++pass) {
        core::ServerRequest request;
        const Stats stats = TimeLoop(pass == 0 ? 0.2 : flags.seconds, [&](std::size_t i) {
          request.method = http::verb::post;
          request.path = request.target = "/scheduler/" + verb;
          request.body = bodies[i % bodies.size()];  // the server hands the body over by value
          const auto response = verb == "filter" ? service->service->HandleFilter(request)
                                                 : service->service->HandlePrioritize(request);
          if (response.status != http::status::ok) throw std::runtime_error(response.body);
        });
        if (pass == 1) Print("handler", verb, count, 1, stats, results);
      }
    }
  }
}

void RunHttp(const Flags& flags, Workload& work, std::vector<json>& results) {
  const core::SystemClock clock;
  const auto service = StartService(work.inventory, clock, true);
  const std::string base = fmt::format("http://127.0.0.1:{}/scheduler/", service->server->port());
  for (std::size_t count : flags.candidates) {
    const auto bodies = Bodies(work, count);
    for (const std::string verb : {"filter", "prioritize"}) {
      for (std::size_t clients : flags.clients) {
        for (int pass = 0; pass < 2; ++pass) {
          const double seconds = pass == 0 ? 0.3 : flags.seconds;
          std::vector<std::vector<double>> micros(clients);
          std::atomic<bool> failed = false;
          const auto started = Steady::now();
          const double cpu_started = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
          const auto until = started + std::chrono::duration<double>(seconds);
          std::vector<std::thread> threads;
          for (std::size_t client = 0; client < clients; ++client) {
            threads.emplace_back([&, client] {
              core::ClientOptions options;
              options.retry.max_attempts = 1;
              auto http_client = core::HttpClient::Create(options);
              if (!http_client) {
                failed = true;
                return;
              }
              for (std::size_t i = client; Steady::now() < until && !failed; i += clients) {
                core::ClientRequest request{.method = http::verb::post,
                                            .url = base + verb,
                                            .body = bodies[i % bodies.size()]};
                request.headers.set(http::field::content_type, "application/json");
                const auto before = Steady::now();
                auto response = (*http_client)->Fetch(request);
                micros[client].push_back(Micros(Steady::now() - before));
                if (!response) {
                  std::cerr << response.error().ToString() << "\n";
                  failed = true;
                }
              }
            });
          }
          for (auto& thread : threads) thread.join();
          const double wall = std::chrono::duration<double>(Steady::now() - started).count();
          const double cpu = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_started;
          if (failed) throw std::runtime_error("an HTTP request failed");
          std::vector<double> all;
          for (const auto& one : micros) all.insert(all.end(), one.begin(), one.end());
          Stats stats = Summarize(std::move(all), wall);
          stats.cpu_us = cpu * 1e6 / static_cast<double>(std::max<std::size_t>(1, stats.count));
          if (pass == 1) Print("http", verb, count, clients, stats, results);
        }
      }
    }
  }
  service->server->Stop();
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"the scheduler extender's decision cost on a synthetic fleet"};
  app.add_option("--nodes", flags.nodes, "nodes in the inventory");
  app.add_option("--revisions", flags.revisions, "ModelRevisions (families of 5)");
  app.add_option("--candidates", flags.candidates, "candidate counts per request")->delimiter(',');
  app.add_option("--clients", flags.clients, "concurrent HTTP clients")->delimiter(',');
  app.add_option("--seconds", flags.seconds, "measuring time per result");
  app.add_option("--modes", flags.modes, "decide, handler, http")->delimiter(',');
  app.add_flag("--breakdown", flags.breakdown, "time the steps of a decision one by one");
  app.add_flag("--verify", flags.verify,
               "check HeldBytes on every node for every pod's revision against a plain recount "
               "from the API objects");
  app.add_option("--json", flags.json_file, "append the JSON results to this file");
  app.add_option("--label", flags.label, "a label for the JSON results (what was measured)");
  CLI11_PARSE(app, argc, argv);

  const auto build_started = Steady::now();
  const auto fleet =
      bench::MakeSyntheticFleet({.nodes = flags.nodes, .revisions = flags.revisions});
  Workload work;
  for (const auto& revision : fleet.revisions) {
    work.inventory.UpsertRevision(extender::MakeRevisionInfo(revision));
  }
  std::size_t held = 0;
  for (const auto& cache : fleet.caches) {
    if (cache.status) held += cache.status->revisions.size();
    work.inventory.UpsertCache(extender::MakeNodeCacheInfo(cache));
  }
  std::mt19937_64 random(42);
  std::discrete_distribution<std::size_t> pick(fleet.popularity.begin(), fleet.popularity.end());
  for (std::size_t i = 0; i < kTargets; ++i) {
    const auto& revision = fleet.revisions[pick(random)];
    work.targets.push_back(revision.metadata.namespace_name + "/" + revision.metadata.name);
  }
  for (std::size_t count : flags.candidates) {
    for (std::size_t list = 0; list < kCandidateLists; ++list) {
      auto names = fleet.node_names;
      std::shuffle(names.begin(), names.end(), random);
      names.resize(std::min(count, names.size()));
      work.lists[count].push_back(std::move(names));
    }
  }
  std::size_t files = 0;
  for (const auto& revision : fleet.revisions) files += revision.spec.files.size();
  fmt::print(
      "fleet: {} nodes, {} ModelCaches ({} revision entries, {:.1f} per cache), {} "
      "revisions ({:.1f} files each), built in {:.1f} s; {} hardware threads\n",
      fleet.node_names.size(), work.inventory.CacheCount(), held,
      static_cast<double>(held) /
          static_cast<double>(std::max<std::size_t>(1, fleet.caches.size())),
      work.inventory.RevisionCount(),
      static_cast<double>(files) / static_cast<double>(fleet.revisions.size()),
      std::chrono::duration<double>(Steady::now() - build_started).count(),
      std::thread::hardware_concurrency());
  fmt::print(
      "{:<8} {:<10} {:>6} {:>3} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
      "mode", "verb", "nodes", "cli", "requests", "p50_us", "p99_us", "max_us", "mean_us", "cpu_us",
      "req/s", "cpu_p50_us", "cpu_p99_us");

  std::vector<json> results;
  try {
    auto wants = [&](std::string_view mode) {
      return std::find(flags.modes.begin(), flags.modes.end(), mode) != flags.modes.end();
    };
    if (flags.verify && Verify(fleet, work) != 0) return 1;
    if (wants("decide")) RunDecide(flags, work, results);
    if (wants("handler")) RunHandler(flags, work, results);
    if (wants("http")) RunHttp(flags, work, results);
    if (flags.breakdown) RunBreakdown(flags, work);
  } catch (const std::exception& error) {
    std::cerr << "extender_bench: " << error.what() << "\n";
    return 1;
  }
  std::ofstream file;
  if (!flags.json_file.empty()) file.open(flags.json_file, std::ios::app);
  double load[1] = {0};
  if (::getloadavg(load, 1) != 1) load[0] = -1;
  for (json result : results) {
    result["label"] = flags.label;
    result["nodes"] = flags.nodes;
    result["load_average_1m"] = std::round(load[0] * 10) / 10;
    result["hardware_threads"] = std::thread::hardware_concurrency();
    std::cout << result.dump() << "\n";
    if (file) file << result.dump() << "\n";
  }
  return 0;
}
