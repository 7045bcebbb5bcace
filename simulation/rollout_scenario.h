// What a simulated rollout is made of: the nodes (zones, NICs, disks, what they hold), the
// model's files, the revision's sources in spec order, and the control plane's settings. The
// simulation (rollout_simulation.h) runs the product's own policy code on it; everything here
// is the world that code acts on, which the simulation models.
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "operator/admission/source_budget.h"

namespace modelplane::simulation {

inline constexpr double kGigabit = 1e9 / 8;  // bytes per second

struct NodeModel {
  std::string name;
  std::string zone;
  double nic_bytes_per_second = 100 * kGigabit;  // each way (full duplex)
  // What the node can write and verify (disk, sha256): its download never goes faster.
  double write_bytes_per_second = 100 * kGigabit;
  // What it can serve peers (disk reads, the peer server's CPU); 0: its NIC.
  double serve_bytes_per_second = 0;
  bool stages = true;        // the rollout wants the revision here
  bool holds_ready = false;  // holds the revision verified before the rollout starts
  double queued_at = 0;      // seconds after the start when its staging is queued
};

enum class OriginKind { kObjectStore, kHttp, kSharedFilesystem };

struct OriginModel {
  std::string identity = "objectStore/https://s3.example/models";  // core/api/source_identity.h
  OriginKind kind = OriginKind::kObjectStore;
  double bytes_per_second = 10e9;          // all readers together
  double stream_bytes_per_second = 100e6;  // one request stream at most (object stores: ~100 MB/s)
  double first_byte_seconds = 0.02;
  // More requests in flight than this, fleet-wide, are answered 503 SlowDown; 0: never.
  int throttle_above_streams = 0;
  std::optional<int> max_streams;  // the spec's capacity hint (maxConcurrentFetches)
  // What the operator has learned of it so far (its SourceBudget's status); empty: a source the
  // fleet has not read yet, which starts at InitialBudget.
  std::optional<controller::SourceBudget> budget;
};

struct ControlModel {
  double operator_pass_seconds = 2;  // admission and peer passes (AdmissionOptions.interval)
  double budget_step_seconds = 5;    // AdmissionOptions.step_interval
  double grant_ttl_seconds = 30;
  int wanted_streams = 16;                       // AdmissionOptions.wanted_streams
  std::optional<int> progress_interval_seconds;  // empty: ProgressIntervalSeconds(fleet size)
  int max_in_flight = 16;                        // FetchOptions.max_in_flight
  int files_in_flight = 8;                       // FetchOptions.files_in_flight
  // Ranges per file ahead of its hash: the pool's buffers shared among the files in flight
  // (256 MiB of 8 MiB ranges over 8 files).
  int window_per_file = 4;
  // Which file a free worker serves (node-agent/fetch/range_scheduler.h): the earliest whose
  // window has room, or (before 2026-12-07) the files in flight in turn.
  bool earliest_file_first = true;
  // One file's SHA-256, which runs on one core in file order (1.6 GB/s with SHA-NI,
  // docs/benchmarks.md): a file is never fetched faster. 0: no limit.
  double hash_bytes_per_second = 1.6e9;
  double range_bytes = 8 << 20;       // FetchOptions.range_size
  int peer_client_streams = 8;        // PeerRangeSourceOptions.max_concurrency
  int peer_server_streams = 32;       // PeerServerOptions.max_streams
  double source_poll_seconds = 0.25;  // FetchOptions.source_poll
  // A peer server serves at most this many readers at once, each until it stops asking
  // (node-agent/peer/reader_admission.h, PeerServerOptions::max_readers); 0: no limit.
  int peer_server_readers = 4;
  // Readers keep their places at a busy peer (the product since 2026-12-07). false: every
  // request competes for a stream afresh, as before, so a busy server's streams pass between
  // all its readers and none finishes early (what the fleet matrix of dec9c55 measured).
  bool readers_keep_their_places = true;
  bool admission = true;  // grants and fan-out (the operator's admission)
  // From the operator's write of a node's spec (grants, peers) to its agent acting on it: the
  // API server, the agent's watch and its next pass.
  double spec_lag_seconds = 0;
  // All nodes share one machine's CPU (calibrating on the local fleet matrix): every byte any
  // node moves counts against this rate too. 0: every node has its own machine.
  double shared_host_bytes_per_second = 0;
  // The origin runs on that host too (the local matrix's MinIO and throttling proxy): each byte
  // it serves costs the host once more.
  bool origin_on_shared_host = false;
};

struct RolloutScenario {
  std::vector<NodeModel> nodes;
  std::vector<std::uint64_t> file_sizes;  // the revision's files, in manifest order
  std::vector<OriginModel> origins;       // the revision's sources, in spec order
  ControlModel control;
  double time_limit_seconds = 3600;  // gives up after this much simulated time
};

// `nodes` nodes spread round-robin over `zones` zones ("zone-0"...), all staging, all alike.
[[nodiscard]] std::vector<NodeModel> UniformFleet(int nodes, int zones, double nic_bytes_per_second,
                                                  double write_bytes_per_second);

// `total_bytes` as files of at most `largest_file` bytes (the last one smaller), as a
// checkpoint's shards are.
[[nodiscard]] std::vector<std::uint64_t> ShardedModel(std::uint64_t total_bytes,
                                                      std::uint64_t largest_file);

// The time one node needs at least: the model over its own download rate (NIC or disk).
[[nodiscard]] double LowerBoundSeconds(const RolloutScenario& scenario, const NodeModel& node);

}  // namespace modelplane::simulation
