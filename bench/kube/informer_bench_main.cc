// Informer benchmark: an informer holding N ModelCache objects on the real local API server.
//
// Reports (one JSON object on stdout):
//   - list_seconds: initial paged list into the store;
//   - bytes_per_object: resident-memory growth of the process per cached object (RSS after the
//     sync minus RSS before, so it includes the JSON trees, the store and the allocator);
//   - end_to_end_events_per_second: N updates written by 4 threads, time until the informer has
//     applied all of them (bounded by what the API server accepts, so it is a floor);
//   - apply_events_per_second: the informer-side cost alone: parsing watch event lines and
//     applying them to an ObjectStore, from lines captured off the real watch.
// Objects are created and deleted by the benchmark; the cluster is otherwise untouched.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include "core/kube/informer.h"

namespace {

using modelplane::core::KubeClient;
using nlohmann::json;
using Steady = std::chrono::steady_clock;

long ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

std::string Digest(int i) {
  char hex[65];
  std::snprintf(hex, sizeof hex, "%064x", i);
  return std::string("sha256:") + hex;
}

json Cache(int i, int generation) {
  json revisions = json::array();
  for (int r = 0; r < 3; ++r) {
    revisions.push_back(
        {{"revision", {{"namespace", "models"}, {"name", "model-" + std::to_string(r)}}},
         {"digest", Digest(i * 8 + r + generation)},
         {"pinned", r == 0},
         {"reason", r == 0 ? "in-use" : "prestage"}});
  }
  return {
      {"apiVersion", "modelplane.io/v1alpha1"},
      {"kind", "ModelCache"},
      {"metadata", {{"name", "bench-" + std::to_string(i)}, {"labels", {{"bench", "informer"}}}}},
      {"spec", {{"revisions", revisions}}}};
}

double Seconds(Steady::time_point since) {
  return std::chrono::duration<double>(Steady::now() - since).count();
}

// Runs `work(i)` for i in [0, count) on `threads` threads; returns false on the first failure.
template <typename Work>
bool Parallel(int count, int threads, Work work) {
  std::atomic<int> next{0};
  std::atomic<bool> ok{true};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next++; i < count && ok; i = next++) {
        if (!work(i)) ok = false;
      }
    });
  }
  for (auto& thread : pool) thread.join();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace modelplane::core;
  CLI::App app{"informer benchmark"};
  std::string kubeconfig;
  int objects = 10'000;
  app.add_option("--kubeconfig", kubeconfig)->required();
  app.add_option("--objects", objects)->check(CLI::Range(1, 100'000));
  CLI11_PARSE(app, argc, argv);

  SystemClock clock;
  auto config = LoadKubeconfigFile(kubeconfig);
  if (!config) return std::fprintf(stderr, "%s\n", config.error().ToString().c_str()), 1;
  KubeClientOptions options;
  options.qps = 5000;
  options.burst = 5000;
  auto client = KubeClient::Create(*config, options, clock);
  auto watcher = Watcher::Create(*config);
  if (!client || !watcher) return std::fprintf(stderr, "cannot connect\n"), 1;
  const ResourceType type = resources::ModelCaches();

  auto cleanup = [&] {
    (void)(*client)->Request("DELETE", type.Path("") + "?labelSelector=bench%3Dinformer", nullptr,
                             "");
  };
  cleanup();
  const auto create_start = Steady::now();
  if (!Parallel(objects, 4, [&](int i) {
        auto created = (*client)->Create(type, "", Cache(i, 0));
        if (!created) std::fprintf(stderr, "%s\n", created.error().ToString().c_str());
        return created.has_value();
      })) {
    cleanup();
    return 1;
  }
  const double create_seconds = Seconds(create_start);

  const long rss_before = ResidentBytes();
  std::atomic<int> updates_seen{0};
  std::vector<std::string> captured_lines;
  Informer informer(**client, **watcher,
                    {.type = type, .label_selector = "bench=informer", .page_size = 500}, clock);
  informer.AddHandlers({.on_update = [&](const ObjectPtr&, const ObjectPtr&) { updates_seen++; }});
  const auto list_start = Steady::now();
  informer.Start();
  if (!informer.WaitForSync(std::chrono::minutes(5))) return std::fprintf(stderr, "no sync\n"), 1;
  const double list_seconds = Seconds(list_start);
  const long rss_after = ResidentBytes();

  const auto update_start = Steady::now();
  Parallel(objects, 4, [&](int i) {
    auto patched = (*client)->Patch(type, "", "bench-" + std::to_string(i), PatchType::kMerge,
                                    {{"spec", Cache(i, 1)["spec"]}});
    return patched.has_value();
  });
  const double write_seconds = Seconds(update_start);
  while (updates_seen.load() < objects && Seconds(update_start) < 300) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double end_to_end_seconds = Seconds(update_start);
  informer.Stop();

  // The informer-side cost alone: decode captured-shape event lines and apply them.
  std::vector<std::string> lines;
  lines.reserve(objects);
  for (const auto& object : informer.store().List()) {
    lines.push_back(json{{"type", "MODIFIED"}, {"object", *object}}.dump());
  }
  ObjectStore store;
  const auto apply_start = Steady::now();
  int rounds = 0;
  while (Seconds(apply_start) < 2.0) {
    for (const auto& line : lines) {
      auto event = ParseWatchEvent(line);
      if (event) store.Upsert(std::make_shared<const json>(std::move(event->object)));
    }
    ++rounds;
  }
  const double apply_rate =
      static_cast<double>(rounds) * static_cast<double>(lines.size()) / Seconds(apply_start);
  cleanup();

  std::printf(
      "{\"objects\": %d, \"create_seconds\": %.2f, \"list_seconds\": %.3f, "
      "\"bytes_per_object\": %.0f, \"rss_after_sync_mib\": %.1f, \"write_seconds\": %.2f, "
      "\"end_to_end_events_per_second\": %.0f, \"apply_events_per_second\": %.0f, "
      "\"event_bytes\": %zu}\n",
      objects, create_seconds, list_seconds, static_cast<double>(rss_after - rss_before) / objects,
      static_cast<double>(rss_after) / 1048576.0, write_seconds, objects / end_to_end_seconds,
      apply_rate, lines.empty() ? 0 : lines.front().size());
  return updates_seen.load() >= objects ? 0 : 1;
}
