// The prestage choice: which nodes should hold a revision before its pods need it. (The
// scheduler extender's placement, where a pod goes, is a different thing.) Pure logic, no I/O, so
// every rule is unit-tested (tests/operator/prestage) and the controller only gathers inputs and
// writes the answer.
//
// Rules, in order:
//   1. A candidate must match the node selector. Nodes already chosen (their ModelCache spec
//      lists the revision) stay chosen while they match, so a revision that is staging or ready
//      is never moved; they are dropped only if they neither hold the revision nor are eligible
//      any more, or if the count went down (then the least preferred go first).
//   2. A new node must be eligible: Ready, schedulable, and with room for the revision when its
//      capacity is known (capacity - used - reserved - assigned >= the bytes it lacks, where
//      assigned is what other revisions' entries ask for and the agent has not reserved yet, and
//      the bytes it lacks are the revision's less the files it holds through other revisions; a
//      node that already holds or stages the revision needs no room).
//   3. Nodes are spread across zones (topology.kubernetes.io/zone): each pick comes from a zone
//      with the fewest chosen nodes so far (round-robin by zone).
//   4. Within that, prefer nodes that hold the revision ready, then staging, then the most of its
//      files through other revisions (those bytes are never fetched again), then the most free
//      space (known capacity before unknown), then the fewest entries, then the node name:
//      deterministic.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace modelplane::controller {

inline constexpr std::string_view kZoneLabel = "topology.kubernetes.io/zone";

// What the node's ModelCache status says about this revision's digest.
enum class HeldState { kNone, kStaging, kReady };

struct PrestageCandidate {
  std::string name;
  // The node's labels that placement, rollouts and gates read: its zone and the keys of the
  // revision's node selector (LabelsPrestageReads). A node carries dozens of labels, and the
  // operator builds a candidate for every node on every reconcile.
  std::map<std::string, std::string> labels;
  bool ready = false;
  bool unschedulable = false;
  // From the ModelCache status; capacity 0 means unknown (no agent has reported yet).
  std::int64_t capacity_bytes = 0;
  std::int64_t used_bytes = 0;
  std::int64_t reserved_bytes = 0;
  HeldState held = HeldState::kNone;
  bool currently_chosen = false;  // its ModelCache spec already lists the revision
  // Bytes of other revisions its spec lists that the agent has not yet stored or reserved: the
  // operator has promised them, so they are not free, though the agent's numbers lag.
  std::int64_t assigned_bytes = 0;
  // Revisions its spec lists: spreads load between nodes whose capacity is unknown.
  int assigned_entries = 0;
  // Bytes of this revision's files the node holds Ready through other revisions.
  std::int64_t held_bytes = 0;
};

struct PrestageRequest {
  std::map<std::string, std::string> node_selector;
  int nodes = 0;
  std::int64_t total_bytes = 0;
};

struct PrestageChoice {
  std::vector<std::string> chosen;  // sorted by name
  // Matching nodes left out because they are not Ready, unschedulable or full; for status
  // messages and tests.
  int ineligible = 0;
};

[[nodiscard]] bool MatchesSelector(const std::map<std::string, std::string>& selector,
                                   const std::map<std::string, std::string>& labels);

// Of a node's labels, those a candidate needs: kZoneLabel and the selector's keys.
[[nodiscard]] std::map<std::string, std::string> LabelsPrestageReads(
    const std::map<std::string, std::string>& labels,
    const std::map<std::string, std::string>& node_selector);

// Bytes free for new stagings, or -1 when the capacity is unknown.
[[nodiscard]] std::int64_t FreeBytes(const PrestageCandidate& candidate);

[[nodiscard]] PrestageChoice ChoosePrestageNodes(const PrestageRequest& request,
                                                 const std::vector<PrestageCandidate>& candidates);

}  // namespace modelplane::controller
