#include "kubectl-plugin/quota_report.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "core/api/model_quota.h"
#include "core/json/json_lookup.h"
#include "kubectl-plugin/terminal_text.h"
#include "kubectl-plugin/text_table.h"

namespace modelplane::cli {
namespace {

namespace api = core::api;
using nlohmann::json;

std::string Usage(std::int64_t used, const std::optional<std::int64_t>& limit,
                  const std::string& limited_by, bool known) {
  const std::string held = known ? FormatBytes(used) : std::string("unknown");
  if (!limit) return held + ", no limit";
  return fmt::format("{} of {} ({}; ModelQuota {})", held, FormatBytes(*limit),
                     known ? FormatPercent(used, *limit) : std::string("-"), limited_by);
}

std::string Ttl(const api::NamespaceQuota& quota) {
  if (!quota.pin_ttl_after_last_use) return "none (pins last as long as their rollout says)";
  const auto seconds = quota.pin_ttl_after_last_use->count();
  return fmt::format("{} after the revision's last use on the node (ModelQuota {})",
                     FormatSeconds(static_cast<double>(seconds)), quota.pin_ttl_by);
}

// The revision's WithinQuota condition, or null.
const json* WithinQuota(const json& revision) {
  const json* conditions = core::FindMember(revision, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return nullptr;
  for (const json& condition : *conditions) {
    if (core::StringMember(condition, {"type"}) == "WithinQuota") return &condition;
  }
  return nullptr;
}

}  // namespace

core::Result<std::string> RenderNamespaceQuota(const std::string& namespace_name,
                                               const std::vector<json>& quotas,
                                               const std::vector<json>& revisions) {
  std::vector<api::ModelQuota> parsed;
  for (const json& object : quotas) {
    auto quota = api::ModelQuotaFromJson(object);
    if (!quota) return std::unexpected(quota.error());
    parsed.push_back(std::move(*quota));
  }
  std::sort(parsed.begin(), parsed.end(),
            [](const auto& a, const auto& b) { return a.metadata.name < b.metadata.name; });
  std::string text = FieldLine("Namespace", namespace_name);
  const api::NamespaceQuota quota = api::CombineQuotas(parsed);
  if (!quota.Limits()) {
    text += WrappedFieldLine(
        "Quota", "none: no ModelQuota in this namespace limits its prestaged or pinned copies");
  } else {
    // The operator writes the namespace's one usage into each of its ModelQuotas: the first by
    // name that has a status tells it.
    const auto reported = std::find_if(parsed.begin(), parsed.end(), [](const api::ModelQuota& q) {
      return q.status.has_value();
    });
    const bool known = reported != parsed.end();
    const api::ModelQuotaStatus status = known ? *reported->status : api::ModelQuotaStatus{};
    text += WrappedFieldLine("Prestaged", Usage(status.used.prestaged_bytes, quota.prestaged_bytes,
                                                quota.prestaged_by, known));
    text += WrappedFieldLine(
        "Pinned", Usage(status.used.pinned_bytes, quota.pinned_bytes, quota.pinned_by, known));
    text += WrappedFieldLine("Pin TTL", Ttl(quota));
    if (!known) {
      text += WrappedFieldLine("Usage", "unknown: the operator has not reported it yet");
    } else if (status.limited_count == 0) {
      text += FieldLine("Limited", "none");
    } else {
      std::string names = fmt::format("{}", fmt::join(status.limited_revisions, ", "));
      if (status.limited_count > static_cast<std::int32_t>(status.limited_revisions.size())) {
        names += fmt::format(
            " and {} more",
            status.limited_count - static_cast<std::int32_t>(status.limited_revisions.size()));
      }
      text += WrappedFieldLine("Limited", fmt::format("{} revision{}: {}", status.limited_count,
                                                      status.limited_count == 1 ? "" : "s", names));
    }
  }
  if (revisions.empty()) {
    text += "\nNo ModelRevisions in this namespace.\n";
    return text;
  }
  TextTable table({{.header = "REVISION"},
                   {.header = "PHASE"},
                   {.header = "PRESTAGE", .right_aligned = true},
                   {.header = "DESIRED", .right_aligned = true},
                   {.header = "READY", .right_aligned = true},
                   {.header = "WITHIN-QUOTA"}});
  std::string refusals;
  std::vector<const json*> sorted;
  sorted.reserve(revisions.size());
  for (const json& revision : revisions) sorted.push_back(&revision);
  std::sort(sorted.begin(), sorted.end(), [](const json* a, const json* b) {
    return core::StringMember(*a, {"metadata", "name"}) <
           core::StringMember(*b, {"metadata", "name"});
  });
  for (const json* revision : sorted) {
    const std::string name = core::StringMember(*revision, {"metadata", "name"});
    const std::string phase = core::StringMember(*revision, {"status", "phase"});
    const json* within = WithinQuota(*revision);
    std::string fits = "-";
    if (within != nullptr) {
      const bool yes = core::StringMember(*within, {"status"}) == "True";
      fits = yes ? "yes" : "no";
      if (!yes) {
        refusals += WrapHanging(
            Printable(fmt::format("{}: {}: {}", name, core::StringMember(*within, {"reason"}),
                                  core::StringMember(*within, {"message"}))),
            "  ");
        refusals += "\n";
      }
    }
    const json* status = core::FindMember(*revision, {"status"});
    table.AddRow({name, phase.empty() ? "unknown" : phase,
                  std::to_string(core::IntegerMember(*revision, {"spec", "prestage", "nodes"})),
                  status == nullptr
                      ? "unknown"
                      : std::to_string(core::IntegerMember(*status, {"desiredNodes"})),
                  status == nullptr ? "unknown"
                                    : std::to_string(core::IntegerMember(*status, {"readyNodes"})),
                  fits});
  }
  text += "\n" + table.Render();
  if (!refusals.empty()) text += "\n" + refusals;
  return text;
}

}  // namespace modelplane::cli
