// The rollout simulator's command line (docs/scale.md): one scenario, the sweep over fleet size,
// zones, model size and NIC speed, the calibration against the local fleet matrix
// (docs/fleet/fleet.csv), and Kraken's published shape. Each writes CSV, one row per run.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "simulation/rollout_simulation.h"

namespace modelplane::simulation {
namespace {

constexpr double kGigabyte = 1e9;
constexpr double kMebibyte = 1 << 20;

struct Shape {
  std::string label;
  int nodes = 1;
  int zones = 1;
  double model_gb = 8;
  double file_gb = 5;
  double nic_gbps = 100;
  bool admission = true;
  ControlModel control;  // the agents' and operator's settings
};

// The origin every sweep row reads: an object-store prefix (S3's published guidance: about
// 100 MB/s per request stream; 5,500 GETs/s per prefix, here 1,000 streams in flight before it
// answers SlowDown), with an aggregate cap of 100 Gb/s.
OriginModel SweepOrigin() {
  return {.bytes_per_second = 100 * kGigabit,
          .stream_bytes_per_second = 100e6,
          .first_byte_seconds = 0.03,
          .throttle_above_streams = 1000};
}

RolloutScenario ScenarioOf(const Shape& shape) {
  RolloutScenario scenario;
  const double nic = shape.nic_gbps * kGigabit;
  // NVMe that writes and hashes at least as fast as the NIC delivers (several drives at 400 Gb/s).
  scenario.nodes = UniformFleet(shape.nodes, shape.zones, nic, nic);
  scenario.file_sizes = ShardedModel(static_cast<std::uint64_t>(shape.model_gb * kGigabyte),
                                     static_cast<std::uint64_t>(shape.file_gb * kGigabyte));
  scenario.origins = {SweepOrigin()};
  scenario.control = shape.control;
  scenario.control.admission = shape.admission;
  scenario.time_limit_seconds = 4 * 3600;
  return scenario;
}

std::string Header() {
  return "label,nodes,zones,model_gb,file_gb,nic_gbps,admission,lower_bound_s,single_node_s,"
         "p50_s,p99_s,finished_s,p99_over_single,origin_copies_per_zone,peak_peer_upload_gbps,"
         "peak_peer_clients,operator_passes,peer_list_writes,status_writes,fleet_plan_cpu_s,"
         "peer_choice_cpu_s,grants_cpu_s,slowest_pass_cpu_s,steps,wall_s,complete";
}

std::string Row(const Shape& shape, const RolloutScenario& scenario, const RolloutOutcome& outcome,
                double single_node) {
  const double p99 = StagingQuantile(outcome, 0.99);
  return fmt::format(
      "{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.2f},{},{},{},{},"
      "{:.3f},{:.3f},{:.3f},{:.4f},{},{:.2f},{}",
      shape.label, shape.nodes, shape.zones, shape.model_gb, shape.file_gb, shape.nic_gbps,
      shape.admission ? 1 : 0, LowerBoundSeconds(scenario, scenario.nodes.front()), single_node,
      StagingQuantile(outcome, 0.5), p99, outcome.finished_at,
      single_node > 0 ? p99 / single_node : 0.0, OriginCopiesPerZone(outcome),
      outcome.peak_peer_upload_bytes_per_second / kGigabit, outcome.peak_peer_clients,
      outcome.operator_passes, outcome.peer_list_writes, outcome.status_writes,
      outcome.policy.fleet_plan, outcome.policy.peer_choice, outcome.policy.grants_and_budgets,
      outcome.policy.slowest_pass, outcome.steps, outcome.wall_seconds, outcome.complete ? 1 : 0);
}

// The same shape on one node: the time the fleet's p99 is held against.
double SingleNodeSeconds(Shape shape) {
  static std::map<std::string, double> cache;
  shape.nodes = 1;
  shape.zones = 1;
  const std::string key =
      fmt::format("{}|{}|{}|{}", shape.model_gb, shape.file_gb, shape.nic_gbps, shape.admission);
  if (auto found = cache.find(key); found != cache.end()) return found->second;
  const RolloutOutcome outcome = Simulate(ScenarioOf(shape));
  return cache[key] = StagingQuantile(outcome, 1.0);
}

void RunShape(const Shape& shape, std::ostream& out) {
  const RolloutScenario scenario = ScenarioOf(shape);
  const double single = SingleNodeSeconds(shape);
  const RolloutOutcome outcome = Simulate(scenario);
  out << Row(shape, scenario, outcome, single) << '\n' << std::flush;
}

std::vector<int> ParseInts(const std::string& list) {
  std::vector<int> values;
  std::stringstream stream(list);
  for (std::string item; std::getline(stream, item, ',');) values.push_back(std::stoi(item));
  return values;
}

std::vector<double> ParseDoubles(const std::string& list) {
  std::vector<double> values;
  std::stringstream stream(list);
  for (std::string item; std::getline(stream, item, ',');) values.push_back(std::stod(item));
  return values;
}

// --- Calibration: the local fleet matrix's cluster, modelled -----------------------------------

struct MatrixCell {
  std::string tier;
  int replicas = 0;
  double bytes_to_ready_p50 = 0;
  double bytes_to_ready_p99 = 0;
  double origin_copies = 0;
};

std::vector<MatrixCell> ReadMatrix(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(fmt::format("cannot read {}", path));
  std::string line;
  std::getline(file, line);
  std::vector<std::string> header;
  {
    std::stringstream stream(line);
    for (std::string column; std::getline(stream, column, ',');) header.push_back(column);
  }
  const auto column = [&](std::string_view name) {
    for (std::size_t index = 0; index < header.size(); ++index) {
      if (header[index] == name) return index;
    }
    throw std::runtime_error(fmt::format("{} has no column {}", path, name));
  };
  const std::size_t tier = column("tier");
  const std::size_t replicas = column("replicas");
  const std::size_t p50 = column("bytes_to_ready_p50_s");
  const std::size_t p99 = column("bytes_to_ready_p99_s");
  const std::size_t copies = column("origin_copies");
  std::vector<MatrixCell> cells;
  while (std::getline(file, line)) {
    std::vector<std::string> fields;
    std::stringstream stream(line);
    for (std::string field; std::getline(stream, field, ',');) fields.push_back(field);
    if (fields.size() < header.size() || fields[p50].empty()) continue;
    cells.push_back({.tier = fields[tier],
                     .replicas = std::stoi(fields[replicas]),
                     .bytes_to_ready_p50 = std::stod(fields[p50]),
                     .bytes_to_ready_p99 = std::stod(fields[p99]),
                     .origin_copies = fields[copies].empty() ? 0 : std::stod(fields[copies])});
  }
  return cells;
}

// What docs/fleet.md's cluster is, in the model's terms: 34 nodes in 2 zones on one 2-vCPU
// host; the first node of each zone a seed; replicas on the others, alternating zones. Every
// agent shares the host's CPU, so the host's hashing and copying rate is a link every byte
// crosses (`host`), and one agent alone moves at most `agent` bytes/s.
struct MatrixModel {
  double agent = 650 * kMebibyte;
  double serve = 0;  // 0: as `agent`
  double host = 550 * kMebibyte;
  double origin = 64 * kMebibyte;  // the throttling proxy's cap
  double shared_filesystem = 220 * kMebibyte;
  double spec_lag = 0;
  // The agents as built since 2026-12-07 (the earliest file first, 32 peer streams) rather than
  // those of dec9c55, which docs/fleet/fleet.csv measured. Their reader limit never bites on
  // one host: every peer reads from 127.0.0.1, one reader.
  bool agents_of_today = false;
};

RolloutScenario MatrixScenario(const MatrixModel& model, const MatrixCell& cell) {
  RolloutScenario scenario;
  constexpr int kNodes = 34;
  for (int index = 0; index < kNodes; ++index) {
    const int zone = index % 2;
    const int in_zone = index / 2;
    scenario.nodes.push_back({.name = fmt::format("node-{:02}", index),
                              .zone = fmt::format("zone-{}", zone),
                              .nic_bytes_per_second = model.agent,
                              .write_bytes_per_second = model.agent,
                              .serve_bytes_per_second = model.serve,
                              .stages = false});
    NodeModel& node = scenario.nodes.back();
    if (in_zone == 0) {
      node.holds_ready = cell.tier == "peer";
    } else {
      node.stages = index - 2 < cell.replicas;  // replicas alternate between the zones
    }
  }
  // 4 shards, the index, config and tokenizer (docs/fleet.md: 270.9 MB in all).
  scenario.file_sizes = {67'108'864, 67'108'864, 67'108'864, 67'108'864, 30'000, 1'000, 2'320'644};
  if (cell.tier == "sharedfs") {
    scenario.origins = {{.identity = "sharedFilesystem/models",
                         .kind = OriginKind::kSharedFilesystem,
                         .bytes_per_second = model.shared_filesystem,
                         .stream_bytes_per_second = model.shared_filesystem,
                         .first_byte_seconds = 0.001}};
  } else {
    scenario.origins = {{.identity = "objectStore/http://127.0.0.1:9000/fleet",
                         .bytes_per_second = model.origin,
                         .stream_bytes_per_second = model.origin,
                         .first_byte_seconds = 0.005,
                         .throttle_above_streams = 16}};
  }
  // As bench/fleet/run.sh runs the agents: 4 MiB ranges, 8 in flight, a 64 MiB pool (a window
  // of 2 ranges for each of 8 files), status every second, and every peer one reader. Those of
  // dec9c55 handed ranges to the files in turn and served 16 peer streams.
  scenario.control.range_bytes = 4 * kMebibyte;
  scenario.control.max_in_flight = 8;
  scenario.control.window_per_file = 2;
  scenario.control.earliest_file_first = model.agents_of_today;
  scenario.control.peer_server_streams = model.agents_of_today ? 32 : 16;
  scenario.control.peer_server_readers = 0;
  scenario.control.readers_keep_their_places = false;
  scenario.control.progress_interval_seconds = 1;
  scenario.control.shared_host_bytes_per_second = model.host;
  scenario.control.spec_lag_seconds = model.spec_lag;
  scenario.control.origin_on_shared_host = true;
  scenario.time_limit_seconds = 600;
  return scenario;
}

int Calibrate(const std::string& matrix_path, const MatrixModel& model, std::ostream& out) {
  out << "tier,replicas,measured_p50_s,simulated_p50_s,p50_error,measured_p99_s,simulated_p99_s,"
         "p99_error,measured_origin_copies,simulated_origin_copies\n";
  for (const MatrixCell& cell : ReadMatrix(matrix_path)) {
    if (cell.tier != "cold" && cell.tier != "peer" && cell.tier != "sharedfs") continue;
    const RolloutOutcome outcome = Simulate(MatrixScenario(model, cell));
    const double p50 = StagingQuantile(outcome, 0.5);
    const double p99 = StagingQuantile(outcome, 0.99);
    double origin = 0;
    for (const auto& [zone, bytes] : outcome.origin_bytes_by_zone) origin += bytes;
    out << fmt::format("{},{},{:.2f},{:.2f},{:+.0f}%,{:.2f},{:.2f},{:+.0f}%,{:.2f},{:.2f}\n",
                       cell.tier, cell.replicas, cell.bytes_to_ready_p50, p50,
                       100 * (p50 / cell.bytes_to_ready_p50 - 1), cell.bytes_to_ready_p99, p99,
                       100 * (p99 / cell.bytes_to_ready_p99 - 1), cell.origin_copies,
                       cell.tier == "sharedfs" ? 0.0 : origin / outcome.model_bytes);
  }
  return 0;
}

// The agents' settings a run may change, to compare the product's choices.
void AddControlOptions(CLI::App& command, ControlModel& control) {
  command.add_option("--files-in-flight", control.files_in_flight, "FetchOptions.files_in_flight");
  command.add_option("--window", control.window_per_file, "ranges per file ahead of its hash");
  command.add_option("--peer-client-streams", control.peer_client_streams,
                     "a node's streams to one peer");
  command.add_option("--peer-server-streams", control.peer_server_streams,
                     "streams one peer serves at once");
  command.add_option("--hash-gbs", control.hash_bytes_per_second,
                     "one file's SHA-256, bytes/s (0: unlimited)");
  command.add_option("--peer-server-readers", control.peer_server_readers,
                     "readers one peer serves at once (0: no limit)");
  command.add_flag("!--readers-compete", control.readers_keep_their_places,
                   "every request competes for a peer's streams (before 2026-12-07)");
  command.add_flag("!--round-robin-files", control.earliest_file_first,
                   "hand ranges to the files in flight in turn (the scheduler before 2026-12-07)");
}

}  // namespace
}  // namespace modelplane::simulation

int main(int argc, char** argv) {
  using namespace modelplane::simulation;
  CLI::App app{"Simulates rollouts on the product's policy code (docs/scale.md)"};
  app.require_subcommand(1);
  std::string out_path;
  app.add_option("--out", out_path, "write CSV here (default: stdout)");

  Shape one;
  auto* one_command = app.add_subcommand("one", "one rollout");
  one_command->add_option("--nodes", one.nodes)->check(CLI::Range(1, 100000));
  one_command->add_option("--zones", one.zones)->check(CLI::Range(1, 64));
  one_command->add_option("--model-gb", one.model_gb)->check(CLI::PositiveNumber);
  one_command->add_option("--file-gb", one.file_gb)->check(CLI::PositiveNumber);
  one_command->add_option("--nic-gbps", one.nic_gbps)->check(CLI::PositiveNumber);
  bool no_admission = false;
  one_command->add_flag("--no-admission", no_admission, "every node reads the origin");
  AddControlOptions(*one_command, one.control);

  std::string nodes_list = "1,10,100,1000,10000";
  std::string zones_list = "1,2,8";
  std::string models_list = "8,70,700";
  std::string nics_list = "25,100,400";
  double file_gb = 5;
  auto* sweep = app.add_subcommand("sweep", "the grid: every combination of the lists");
  sweep->add_option("--nodes", nodes_list);
  sweep->add_option("--zones", zones_list);
  sweep->add_option("--model-gb", models_list);
  sweep->add_option("--nic-gbps", nics_list);
  sweep->add_option("--file-gb", file_gb);
  ControlModel sweep_control;
  AddControlOptions(*sweep, sweep_control);

  std::string matrix_path = "docs/fleet/fleet.csv";
  MatrixModel model;
  auto* calibrate = app.add_subcommand("calibrate", "the local fleet matrix, modelled");
  calibrate->add_option("--matrix", matrix_path);
  double agent_mib = 650;
  double serve_mib = 0;
  double host_mib = 550;
  double shared_mib = 220;
  calibrate->add_option("--agent-mibs", agent_mib, "one agent's fetch rate alone, MiB/s");
  calibrate->add_option("--serve-mibs", serve_mib, "one agent's serving rate, MiB/s (0: as fetch)");
  calibrate->add_option("--host-mibs", host_mib, "all agents together, MiB/s");
  calibrate->add_option("--shared-mibs", shared_mib, "the shared filesystem, MiB/s");
  calibrate->add_option("--spec-lag", model.spec_lag, "operator write to agent action, s");
  calibrate->add_flag("--agents-of-today", model.agents_of_today,
                      "the agents as built now, not those of dec9c55 (for a matrix re-run)");
  auto* kraken = app.add_subcommand("kraken", "Kraken's published shape: 3 GB to 2,600 hosts");
  CLI11_PARSE(app, argc, argv);

  std::ofstream file;
  if (!out_path.empty()) file.open(out_path);
  std::ostream& out = out_path.empty() ? std::cout : file;
  if (*calibrate) {
    model.agent = agent_mib * kMebibyte;
    model.serve = serve_mib * kMebibyte;
    model.host = host_mib * kMebibyte;
    model.shared_filesystem = shared_mib * kMebibyte;
    try {
      return Calibrate(matrix_path, model, out);
    } catch (const std::exception& error) {
      std::cerr << "error: " << error.what() << '\n';
      return 1;
    }
  }
  out << Header() << '\n';
  if (*one_command) {
    one.label = "one";
    one.admission = !no_admission;
    RunShape(one, out);
  } else if (*sweep) {
    for (const double model_gb : ParseDoubles(models_list)) {
      for (const double nic : ParseDoubles(nics_list)) {
        for (const int zones : ParseInts(zones_list)) {
          for (const int nodes : ParseInts(nodes_list)) {
            if (zones > nodes) continue;
            RunShape({.label = "sweep",
                      .nodes = nodes,
                      .zones = zones,
                      .model_gb = model_gb,
                      .file_gb = file_gb,
                      .nic_gbps = nic,
                      .control = sweep_control},
                     out);
          }
        }
      }
    }
  } else if (*kraken) {
    // Kraken's benchmark: a 3 GB image in two layers to 2,600 hosts, each agent capped at
    // 300 MB/s (2.4 Gb/s), in one cluster.
    RunShape({.label = "kraken",
              .nodes = 2600,
              .zones = 1,
              .model_gb = 3,
              .file_gb = 1.5,
              .nic_gbps = 2.4},
             out);
  }
  return 0;
}
