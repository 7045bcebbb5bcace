// The reads that fill a layout's arenas (arena_layout.h): which byte ranges of which file, in
// what order, in requests of what size, and where each one's bytes go.
//
// A run is read in requests of at most request_bytes: straight into its place in the arena
// for a CPU load, by cuFile straight into device memory for a file GDS serves, and otherwise
// through a ring slot (staged) whose bytes are then copied to the device or dropped. A mapped
// file's runs are not read at all: they are populated from the file's mapping. Offsets are
// aligned down and ends up to the file's alignment (4 KiB under O_DIRECT), so a read may take
// bytes on either side of what the rank needs.
//
// A column split's chunks are coalesced into slot-sized staged reads, gaps of up to
// coalesce_gap_bytes (counted in blocks actually read) read and dropped; on a CPU load of a
// buffered file, chunks of at least kDirectChunkMinBytes are read straight into place instead.
//
// Pure: destinations are offsets in the file's arena, not addresses, so a plan is computed and
// tested without I/O or memory; the loader adds each file's arena address when it reads.
// Thread safety: reentrant; plans are values.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "node-agent/loader/arena_layout.h"

namespace modelplane::agent {

// Column-split chunks at least this long are read straight into place on buffered files
// rather than staged: the request is big enough that its count does not matter.
inline constexpr std::uint64_t kDirectChunkMinBytes = 64u << 10;

// Where part of a staged read goes: `length` bytes at `slot_offset` of the ring slot, to
// `destination` in the file's arena.
struct ReadPiece {
  std::uint64_t slot_offset = 0;
  std::uint64_t length = 0;
  std::uint64_t destination = 0;
};

struct ReadOp {
  std::uint32_t file = 0;
  std::uint64_t offset = 0;  // in the file
  std::uint64_t length = 0;
  // Unstaged: read straight to `destination` in the file's arena. Staged: read into a ring
  // slot, from which `pieces` go to their places.
  bool staged = false;
  std::uint64_t destination = 0;
  std::vector<ReadPiece> pieces;
};

// Bytes of a mapped file the load populates from the mapping rather than reads.
struct MappedRange {
  std::uint32_t file = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

// How one file is read, decided when it was opened (checkpoint_file.h) and when GDS
// registered it (gds_reader.h).
struct FileReadMode {
  bool direct = false;  // O_DIRECT: reads aligned to kDirectAlignment
  bool mapped = false;  // runs come from the file's mapping
  bool gds = false;     // runs are read by cuFile into device memory
};

struct ReadPlanOptions {
  bool host_destination = false;  // a CPU load: the arenas are host memory reads can land in
  std::uint64_t request_bytes = kDefaultRequestBytes;  // also the ring's slot size
  std::uint64_t coalesce_gap_bytes = 64u << 10;
};

struct ReadPlan {
  std::vector<ReadOp> reads;        // through the read engine, in submission order
  std::vector<ReadOp> gds_reads;    // by cuFile, never staged
  std::vector<MappedRange> mapped;  // populated from file mappings

  // Whether any read needs the staging ring.
  [[nodiscard]] bool Staged() const;
};

// `modes` has one entry per file of the layout.
[[nodiscard]] ReadPlan PlanReads(const ArenaLayout& layout, std::span<const FileReadMode> modes,
                                 const ReadPlanOptions& options);

}  // namespace modelplane::agent
