// Decides which range a free fetch worker takes next.
//
// Two rules keep a fetch fast, its memory bounded, and its files servable early:
// - Files in flight: ranges come from a few files at a time (the first unfinished ones, in
//   request order), the earliest file first: a free worker takes a range of the first file
//   whose window has room. Each file's SHA-256 runs in order on one thread at a time, so while
//   a file's hash keeps up it takes the workers and completes (and can be served to peers)
//   as soon as its bytes allow; when its hash falls behind, its window fills and the workers
//   go on to the next files, whose hashes then run on other cores. Handing ranges round-robin
//   instead made every file of a slow read complete only near its end: a zone's seeder reading
//   the origin at 1.6 GB/s over eight files verified its first 5 GB file after 25 s, and its
//   whole zone waited for it (bench/rollout-sim, docs/scale.md).
// - A window per file: a range is handed out only while it lies less than `window` ranges past
//   the first range the file's hash has not reached. Ranges that land early wait, parked with
//   their buffers, for the hash; the window caps how many, so parked buffers never crowd out
//   the range the hash is waiting for and no range has to be read back from disk to be hashed.
//
// Within a file, ranges are handed out in order, so the range the hash waits for was always
// handed out before any range parked behind it.
//
// Thread safety: none; the fetch run calls it under its own lock.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <vector>

namespace modelplane::agent {

class RangeScheduler {
 public:
  struct Options {
    std::size_t files_in_flight = 8;  // at least 1
    std::size_t window = 8;           // ranges per file past its hash; at least 1
  };
  struct Task {
    std::size_t file = 0;
    std::size_t range = 0;
  };

  RangeScheduler(Options options, std::size_t file_count);

  // Sets the ranges of `file` still to fetch (ascending), and where its hash stands. Called once
  // per file before the first Next, and again when a file starts over (a refetch after a digest
  // mismatch), which replaces what was pending. A file never given ranges is not scheduled.
  void SetPending(std::size_t file, std::vector<std::size_t> ranges, std::size_t hashed);
  // The hash of `file` reached range `next_unhashed`: its window moves on.
  void Hashed(std::size_t file, std::size_t next_unhashed);
  // `file` is published or failed: it leaves the files in flight, and the next one enters.
  void Finished(std::size_t file);

  // The next range to fetch, or nothing when every file in flight is at its window's end or has
  // nothing pending.
  [[nodiscard]] std::optional<Task> Next();
  [[nodiscard]] bool HasWork();  // whether Next would return a range

  [[nodiscard]] const Options& options() const { return options_; }

 private:
  struct File {
    std::deque<std::size_t> pending;
    std::size_t hashed = 0;
    bool scheduled = false;  // SetPending was called
    bool finished = false;
  };
  [[nodiscard]] bool Ready(const File& file) const;
  void Admit();

  const Options options_;
  std::vector<File> files_;
  std::vector<std::size_t> in_flight_;  // file indexes, in admission order
  std::size_t next_to_admit_ = 0;
};

}  // namespace modelplane::agent
