// How much of what one revision asks for beyond its pods fits in its namespace's ModelQuotas
// (core/api/model_quota.h): prestaged copies and pinned copies, each charged at the revision's
// full size per node. Pure logic, unit-tested (tests/operator/quotas); the ledger
// (quota_ledger.h) supplies what the namespace's other revisions hold.
//
// The copies asked for come most preferred first, and a grant keeps a prefix of them: the
// caller lists the nodes that already hold the revision first, so a limit never makes a node
// drop bytes it holds while another fetches them. A revision whose copies do not all fit gets a
// refusal per kind that says how many fit, which ModelQuota limits them, what the other
// revisions of the namespace hold and what one copy costs; it names no node.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/api/model_quota.h"

namespace modelplane::controller {

namespace api = core::api;

struct QuotaAsk {
  std::int64_t bytes_per_copy = 0;          // the revision's total size
  std::vector<std::string> prestage_nodes;  // most preferred first
  std::vector<std::string> pinned_nodes;    // most preferred first
};

struct QuotaGrant {
  std::vector<std::string> prestage_nodes;  // a prefix of the ask's
  std::vector<std::string> pinned_nodes;    // likewise
  api::QuotaBytes charge;                   // what the granted copies cost
  std::vector<std::string> refusals;        // one message per kind cut; empty when all fit

  [[nodiscard]] bool Limited() const { return !refusals.empty(); }
};

// `others`: what the namespace's other revisions hold. A revision already over a lowered
// limit is cut on its next pass, like any other.
[[nodiscard]] QuotaGrant GrantWithinQuota(const QuotaAsk& ask, const api::NamespaceQuota& quota,
                                          const api::QuotaBytes& others,
                                          const std::string& namespace_name);

// A revision whose own prestage ask exceeds its namespace's limit even with nothing else held:
// the refusal the admission webhook answers (it can never be granted whole), or none.
[[nodiscard]] std::optional<std::string> PrestageBeyondQuota(std::int64_t bytes_per_copy,
                                                             std::int32_t nodes,
                                                             const api::NamespaceQuota& quota,
                                                             const std::string& namespace_name);

}  // namespace modelplane::controller
