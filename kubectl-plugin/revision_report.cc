#include "kubectl-plugin/revision_report.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/api/model_revocation.h"
#include "core/api/object_key.h"
#include "kubectl-plugin/text_table.h"

namespace modelplane::cli {

namespace api = core::api;

namespace {

std::string RequestText(const RevisionCopy& copy) {
  if (!copy.requested) return "-";
  std::string text = copy.requested->reason.empty() ? "yes" : copy.requested->reason;
  if (copy.requested->pinned) text += ",pinned";
  return text;
}

std::string CacheMessage(const RevisionCopy& copy) {
  if (!copy.cached) return copy.requested ? "the node agent has not reported it yet" : "";
  const api::CachedRevision& cached = *copy.cached;
  if (cached.reason.empty()) return cached.message;
  if (cached.message.empty()) return cached.reason;
  return cached.reason + ": " + cached.message;
}

std::string ConditionText(const api::Condition& condition) {
  std::string text = condition.type + "=" + condition.status;
  if (!condition.reason.empty()) text += " " + condition.reason;
  if (!condition.message.empty()) text += ": " + condition.message;
  return text;
}

struct NodeRow {
  std::optional<RevisionCopy> copy;
  std::optional<api::NodeServing> serving;  // the revision status' entry for the node
};

std::string BytesDone(const api::CachedRevision& cached) {
  std::string done = FormatBytes(cached.bytes_done);
  if (cached.bytes_total <= 0) return done;
  return done + " (" + FormatPercent(cached.bytes_done, cached.bytes_total) + ")";
}

void RenderNodes(std::string& out, const std::map<std::string, NodeRow>& rows,
                 const CacheListing& caches) {
  TextTable table({{"NODE", 28},
                   {"STATE", 10},
                   {"TIER", 16},
                   {"BYTES-DONE", 18, true},
                   {"BYTES-TO-READY", 0, true},
                   {"WANTED", 18}});
  std::string messages;
  for (const auto& [node, row] : rows) {
    const std::string state =
        row.copy ? CopyState(*row.copy) : (caches.unavailable ? "unknown" : "-");
    const bool ready = state == api::kCacheStateReady;
    std::string tier = row.serving && !row.serving->tier.empty() ? row.serving->tier : "";
    if (tier.empty() && row.copy && row.copy->cached) tier = row.copy->cached->source_tier;
    if (tier.empty()) tier = ready ? "unknown" : "-";
    std::optional<double> seconds;
    if (row.serving) seconds = row.serving->bytes_to_ready_seconds;
    if (!seconds && row.copy && row.copy->cached) {
      seconds = core::api::BytesToReadySeconds(*row.copy->cached);
    }
    const std::string ready_in = seconds ? FormatSeconds(*seconds) : (ready ? "unknown" : "-");
    table.AddRow({node, state, tier,
                  row.copy && row.copy->cached ? BytesDone(*row.copy->cached) : "-", ready_in,
                  row.copy ? RequestText(*row.copy) : "-"});
    if (const std::string message = row.copy ? CacheMessage(*row.copy) : ""; !message.empty()) {
      messages += WrapHanging(Printable(fmt::format("{}: {}", node, message)), "  ");
      messages += '\n';
    }
  }
  out += table.Render();
  if (!messages.empty()) out += "\n" + messages;
}

// status.fetchedBytes: the bytes of every tier, then the origins' sum and its share per Ready
// node (one origin copy per zone shows as less than the revision's size).
std::string FetchedText(const std::optional<api::FetchedBytes>& fetched) {
  if (!fetched || fetched->by_tier.empty()) {
    return "unknown (no node has reported where its bytes came from)";
  }
  std::string text;
  for (const auto& [tier, bytes] : fetched->by_tier) {
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", tier, FormatBytes(bytes));
  }
  text += "; from origins " + FormatBytes(fetched->origin_bytes);
  if (fetched->origin_bytes_per_replica > 0) {
    text += ", " + FormatBytes(fetched->origin_bytes_per_replica) + " per Ready node";
  }
  return text;
}

}  // namespace

core::Result<std::string> RenderRevisionStatus(const nlohmann::json& object,
                                               const CacheListing& caches, api::Timestamp now) {
  auto parsed = api::ModelRevisionFromJson(object);
  if (!parsed) return std::unexpected(parsed.error().Wrap("reading the ModelRevision"));
  const api::ModelRevision& revision = *parsed;
  const api::RevisionReference reference{.namespace_name = revision.metadata.namespace_name,
                                         .name = revision.metadata.name};
  std::string out;
  out += FieldLine("Revision", core::api::ObjectKey(reference.namespace_name, reference.name));
  if (!revision.spec.model_name.empty() || !revision.spec.repository_revision.empty()) {
    std::string model = revision.spec.model_name.empty() ? "-" : revision.spec.model_name;
    if (!revision.spec.repository_revision.empty()) {
      model += " @ " + revision.spec.repository_revision;
    }
    out += FieldLine("Model", model);
  }
  std::int64_t spec_bytes = 0;
  for (const api::ModelFile& file : revision.spec.files) spec_bytes += file.size;
  const api::ModelRevisionStatus* status = revision.status ? &*revision.status : nullptr;
  if (status == nullptr || status->phase.empty()) {
    out += FieldLine("Phase", "unknown (the operator has not written status)");
  } else if (status->observed_generation != 0 &&
             status->observed_generation < revision.metadata.generation) {
    out += FieldLine(
        "Phase", fmt::format("{} (status is of generation {}, the spec is at {})", status->phase,
                             status->observed_generation, revision.metadata.generation));
  } else {
    out += FieldLine("Phase", status->phase);
  }
  out += FieldLine("Digest",
                   status != nullptr && !status->digest.empty() ? status->digest : "unknown");
  out += FieldLine(
      "Size", fmt::format("{} in {} file{}", FormatBytes(spec_bytes), revision.spec.files.size(),
                          revision.spec.files.size() == 1 ? "" : "s"));
  if (status != nullptr) {
    out += FieldLine(
        "Nodes", fmt::format("{} desired, {} staging, {} ready, {} failed", status->desired_nodes,
                             status->staging_nodes, status->ready_nodes, status->failed_nodes));
    out += FieldLine("Bytes-to-ready",
                     status->bytes_to_ready_seconds
                         ? fmt::format("p50 {}, p95 {}, p99 {} (queued to published)",
                                       FormatSeconds(status->bytes_to_ready_seconds->p50),
                                       FormatSeconds(status->bytes_to_ready_seconds->p95),
                                       FormatSeconds(status->bytes_to_ready_seconds->p99))
                         : "unknown (no node has become ready)");
    out += WrappedFieldLine("Fetched", FetchedText(status->fetched));
  }
  if (revision.spec.prestage && revision.spec.prestage->nodes > 0) {
    std::string selector;
    for (const auto& [key, value] : revision.spec.prestage->node_selector) {
      selector += fmt::format("{}{}={}", selector.empty() ? "" : ",", key, value);
    }
    out += FieldLine("Prestage", fmt::format("{} node{}{}", revision.spec.prestage->nodes,
                                             revision.spec.prestage->nodes == 1 ? "" : "s",
                                             selector.empty() ? "" : " matching " + selector));
  }
  if (!revision.spec.signatures.empty()) {
    // What the operator verified, not what the bundles claim: unverified until it says so.
    std::vector<std::string> signers;
    if (status != nullptr) {
      signers.reserve(status->signed_by.size());
      for (const api::SignedBy& signature : status->signed_by) {
        signers.push_back(signature.identity.empty()
                              ? fmt::format("{} (key {})", signature.signer, signature.public_key)
                              : fmt::format("{} ({}, key {})", signature.signer, signature.identity,
                                            signature.public_key));
      }
    }
    out += WrappedFieldLine(
        "Signed-by", signers.empty()
                         ? fmt::format("unverified ({} signature{}; see the Valid condition)",
                                       revision.spec.signatures.size(),
                                       revision.spec.signatures.size() == 1 ? "" : "s")
                         : fmt::format("{}", fmt::join(signers, "; ")));
  }
  if (api::IsRevoked(revision)) {
    std::string purge = "yes; purge progress unknown (the operator has not reported it)";
    if (status != nullptr && status->purge) {
      const api::PurgeProgress& progress = *status->purge;
      purge = progress.nodes_holding == 0
                  ? "yes; purged: no node holds any of its bytes"
                  : fmt::format("yes; purging: {} node{} still hold {} ({})",
                                progress.nodes_holding, progress.nodes_holding == 1 ? "" : "s",
                                FormatBytes(progress.bytes_held), fmt::join(progress.nodes, ", "));
    }
    out += WrappedFieldLine("Revoked", purge);
  }
  if (status != nullptr) {
    for (const api::Condition& condition : status->conditions) {
      out += WrappedFieldLine("Condition", ConditionText(condition));
    }
  }
  if (revision.metadata.creation_timestamp) {
    out += FieldLine("Age", FormatAge(*revision.metadata.creation_timestamp, now));
  }

  const RevisionCopies copies =
      FindRevisionCopies(reference, status != nullptr ? status->digest : "", caches.items);
  std::map<std::string, NodeRow> rows;
  for (const RevisionCopy& copy : copies.copies) rows[copy.node].copy = copy;
  if (status != nullptr) {
    for (const api::NodeServing& serving : status->nodes) rows[serving.node].serving = serving;
  }
  out += "\n";
  if (rows.empty()) {
    out += caches.unavailable ? "No node is listed in the revision's status.\n"
                              : "No node holds this revision or is asked to.\n";
  } else {
    RenderNodes(out, rows, caches);
  }
  std::string notes;
  if (caches.unavailable) {
    notes += WrapParagraph(Printable("ModelCaches could not be listed (" + *caches.unavailable +
                                     "): node states are unknown; tiers and bytes-to-ready come "
                                     "from the revision's status.")) +
             "\n";
  }
  for (const std::string& problem : copies.unreadable) {
    notes += WrapParagraph(Printable("ModelCache " + problem + " (left out)")) + "\n";
  }
  if (!notes.empty()) out += "\n" + notes;
  return out;
}

}  // namespace modelplane::cli
