#include "kubectl-plugin/cache_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/api/model_cache.h"
#include "core/api/object_key.h"
#include "kubectl-plugin/text_table.h"

namespace modelplane::cli {

namespace api = core::api;

namespace {

// "sha256:1dbee88ca406": enough of a digest to tell revisions apart in a table.
constexpr std::size_t kShortDigest = 19;

struct Row {
  std::string name;  // namespace/name from the spec entry, else the short digest
  const api::DesiredRevision* wanted = nullptr;
  const api::CachedRevision* cached = nullptr;
};

std::string Wanted(const api::DesiredRevision* wanted, api::Timestamp now) {
  if (wanted == nullptr) return "-";
  std::string text = wanted->reason.empty() ? "yes" : wanted->reason;
  if (!wanted->pinned) return text;
  text += " pin";
  if (wanted->pinned_until) {
    text += *wanted->pinned_until > now
                ? " " + FormatSeconds(
                            std::chrono::duration<double>(*wanted->pinned_until - now).count())
                : " lapsed";
  }
  return text;
}

std::string Bytes(const api::CachedRevision* cached) {
  if (cached == nullptr) return "-";
  if (cached->state == api::kCacheStateReady || cached->bytes_total <= 0 ||
      cached->bytes_done == cached->bytes_total) {
    return FormatBytes(cached->state == api::kCacheStateReady ? cached->bytes_total
                                                              : cached->bytes_done);
  }
  return FormatPercent(cached->bytes_done, cached->bytes_total) + " of " +
         FormatBytes(cached->bytes_total);
}

// A revision no protection class covers is what the agent may evict, once it is Ready (an entry
// still staging is reserved; a Failed one holds nothing).
bool Evictable(const api::CachedRevision* cached) {
  return cached != nullptr && cached->protection.empty() && cached->state == api::kCacheStateReady;
}

std::string Protection(const api::CachedRevision* cached) {
  if (cached == nullptr) return "-";
  if (!cached->protection.empty()) return fmt::format("{}", fmt::join(cached->protection, ","));
  return Evictable(cached) ? "evictable" : "-";
}

}  // namespace

core::Result<std::string> RenderCache(const nlohmann::json& object, api::Timestamp now) {
  auto parsed = api::ModelCacheFromJson(object);
  if (!parsed) return std::unexpected(parsed.error().Wrap("reading the ModelCache"));
  const api::ModelCache& cache = *parsed;
  std::string out;
  const api::ModelCacheStatus* status = cache.status ? &*cache.status : nullptr;
  std::string where = cache.metadata.name;
  if (status != nullptr) {
    std::vector<std::string> details;
    if (!status->zone.empty()) details.push_back("zone " + status->zone);
    if (!status->peer_endpoint.empty())
      details.push_back("peers fetch from " + status->peer_endpoint);
    if (!details.empty()) where += fmt::format(" ({})", fmt::join(details, ", "));
  }
  out += FieldLine("ModelCache", where);
  if (status == nullptr) {
    out += WrappedFieldLine("Status", "not reported: the node agent on " + cache.metadata.name +
                                          " has not written status (is it running?)");
  } else {
    if (status->observed_generation != 0 &&
        status->observed_generation < cache.metadata.generation) {
      out +=
          FieldLine("Status", fmt::format("of generation {}, the spec is at {}: the agent has "
                                          "not caught up",
                                          status->observed_generation, cache.metadata.generation));
    }
    const std::int64_t free_bytes = std::max<std::int64_t>(
        0, status->capacity_bytes - status->used_bytes - status->reserved_bytes);
    out +=
        FieldLine("Capacity",
                  fmt::format("{}; used {} ({}), reserved {}, free {}",
                              FormatBytes(status->capacity_bytes), FormatBytes(status->used_bytes),
                              FormatPercent(status->used_bytes, status->capacity_bytes),
                              FormatBytes(status->reserved_bytes), FormatBytes(free_bytes)));
    if (status->high_watermark_bytes > 0 || status->low_watermark_bytes > 0) {
      out += FieldLine("Watermarks", fmt::format("evicts above {}, down to {}",
                                                 FormatBytes(status->high_watermark_bytes),
                                                 FormatBytes(status->low_watermark_bytes)));
    }
    out += FieldLine("Eviction", fmt::format("{} reclaimable; {} protected",
                                             FormatBytes(status->reclaimable_bytes),
                                             FormatBytes(status->protected_bytes)));
    if (status->media_bandwidth_bytes_per_second > 0) {
      out +=
          FieldLine("Media", FormatBytes(status->media_bandwidth_bytes_per_second) + "/s measured");
    }
    for (const api::Condition& condition : status->conditions) {
      std::string text = condition.type + "=" + condition.status;
      if (!condition.reason.empty()) text += " " + condition.reason;
      if (!condition.message.empty()) text += ": " + condition.message;
      out += WrappedFieldLine("Condition", text);
    }
  }

  // One row per digest: status entries first named through the spec entry with their digest,
  // then spec entries the agent has not reported.
  std::map<std::string, const api::DesiredRevision*> wanted_by_digest;
  for (const api::DesiredRevision& entry : cache.spec.revisions) {
    if (!entry.digest.empty()) wanted_by_digest.emplace(entry.digest, &entry);
  }
  std::vector<Row> rows;
  std::map<std::string, bool> reported;
  if (status != nullptr) {
    for (const api::CachedRevision& cached : status->revisions) {
      Row row{.cached = &cached};
      if (auto found = wanted_by_digest.find(cached.digest); found != wanted_by_digest.end()) {
        row.wanted = found->second;
        row.name = core::api::ObjectKey(found->second->revision.namespace_name,
                                        found->second->revision.name);
      } else {
        row.name = cached.digest.substr(0, kShortDigest);
      }
      reported[cached.digest] = true;
      rows.push_back(row);
    }
  }
  for (const api::DesiredRevision& entry : cache.spec.revisions) {
    if (reported.contains(entry.digest)) continue;
    rows.push_back(
        {.name = core::api::ObjectKey(entry.revision.namespace_name, entry.revision.name),
         .wanted = &entry});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.name < b.name; });

  out += "\n";
  if (rows.empty()) {
    out += "It holds no revision and is asked for none.\n";
    return out;
  }
  TextTable table({{"REVISION", 22},
                   {"STATE", 10},
                   {"BYTES", 16, true},
                   {"UNIQUE", 10, true},
                   {"WANTED", 20},
                   {"PROTECTION", 0}});
  std::int64_t evictable_bytes = 0;
  int evictable = 0;
  std::string messages;
  for (const Row& row : rows) {
    table.AddRow({row.name, row.cached != nullptr ? row.cached->state : "Requested",
                  Bytes(row.cached),
                  row.cached != nullptr ? FormatBytes(row.cached->unique_bytes) : "-",
                  Wanted(row.wanted, now), Protection(row.cached)});
    if (Evictable(row.cached)) {
      ++evictable;
      evictable_bytes += row.cached->unique_bytes;
    }
    std::string message;
    if (row.cached == nullptr) {
      message = "asked for; the node agent has not reported it yet";
    } else if (!row.cached->reason.empty() || !row.cached->message.empty()) {
      message = row.cached->reason;
      if (!row.cached->message.empty()) {
        message += (message.empty() ? "" : ": ") + row.cached->message;
      }
    }
    if (!message.empty())
      messages += WrapHanging(Printable(row.name + ": " + message), "  ") + "\n";
  }
  out += table.Render();
  out += "\n";
  out += WrapParagraph(fmt::format(
             "Evictable now: {} revision{} freeing {} (eviction runs only above the high "
             "watermark, and never takes a protected revision).",
             evictable, evictable == 1 ? "" : "s", FormatBytes(evictable_bytes))) +
         "\n";
  if (!messages.empty()) out += "\n" + messages;
  return out;
}

}  // namespace modelplane::cli
