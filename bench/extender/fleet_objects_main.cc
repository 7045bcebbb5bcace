// Writes the extender benchmark's synthetic fleet (synthetic_fleet.h) as Kubernetes objects, for
// bench/extender/cycle.sh to load into a real API server: the same ModelRevisions and
// ModelCaches the in-process benchmark decides over, so that the scheduling-cycle numbers and
// the in-process ones describe one inventory.
//
//   extender_fleet_objects --nodes 5000 --revisions 200 --out DIR
//
// DIR/revisions.jsonl and DIR/caches.jsonl: one object per line, status included (the loader
// creates each object, then writes its status subresource); DIR/popularity.jsonl: one line per
// revision, {"namespace", "name", "weight", "revoked"}, how often pods name it.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/extender/synthetic_fleet.h"

namespace {

bool WriteLines(const std::filesystem::path& path, const auto& objects, auto to_json) {
  std::ofstream out(path, std::ios::trunc);
  for (const auto& object : objects) out << to_json(object).dump() << '\n';
  out.flush();
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

// Writes the fleet into `dir`; false (with a message) when a file cannot be written.
bool WriteFleet(const modelplane::bench::FleetShape& shape, const std::filesystem::path& dir) {
  const auto fleet = modelplane::bench::MakeSyntheticFleet(shape);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    std::fprintf(stderr, "cannot create %s: %s\n", dir.c_str(), error.message().c_str());
    return false;
  }
  namespace api = modelplane::core::api;
  bool ok = WriteLines(dir / "revisions.jsonl", fleet.revisions,
                       [](const api::ModelRevision& revision) { return api::ToJson(revision); });
  ok = ok && WriteLines(dir / "caches.jsonl", fleet.caches,
                        [](const api::ModelCache& cache) { return api::ToJson(cache); });
  std::vector<nlohmann::json> popularity;
  for (std::size_t i = 0; i < fleet.revisions.size(); ++i) {
    const auto& revision = fleet.revisions[i];
    popularity.push_back({{"namespace", revision.metadata.namespace_name},
                          {"name", revision.metadata.name},
                          {"weight", fleet.popularity[i]},
                          {"revoked", revision.spec.revoked}});
  }
  ok = ok && WriteLines(dir / "popularity.jsonl", popularity,
                        [](const nlohmann::json& line) { return line; });
  if (ok) {
    std::printf("%zu revisions, %zu caches, %zu nodes\n", fleet.revisions.size(),
                fleet.caches.size(), fleet.node_names.size());
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  modelplane::bench::FleetShape shape;
  std::string out_dir;
  CLI::App app{"the extender benchmark's synthetic fleet as API objects (JSON lines)"};
  app.add_option("--nodes", shape.nodes, "nodes (ModelCaches are named gpu-node-N)");
  app.add_option("--revisions", shape.revisions, "ModelRevisions (families of 5)");
  app.add_option("--seed", shape.seed, "random seed");
  app.add_option("--out", out_dir, "folder to write into")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    return WriteFleet(shape, out_dir) ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "extender_fleet_objects: %s\n", error.what());
    return 1;
  }
}
