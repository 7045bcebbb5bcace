#include "operator/quotas/quota_grant.h"

#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "core/text/byte_text.h"

namespace modelplane::controller {
namespace {

struct Kind {
  const char* copies;  // "prestaged", "pinned"
  const std::optional<std::int64_t>& limit;
  const std::string& limited_by;
  std::int64_t others;
};

// How many of `asked` copies of `bytes` each fit under the kind's limit, and the refusal when
// not all do.
std::size_t Fit(const Kind& kind, std::int64_t bytes, std::size_t asked,
                const std::string& namespace_name, std::vector<std::string>& refusals) {
  if (!kind.limit || bytes <= 0 || asked == 0) return asked;
  const std::int64_t room = std::max<std::int64_t>(0, *kind.limit - kind.others);
  const auto fit = static_cast<std::size_t>(
      std::min<std::int64_t>(room / bytes, static_cast<std::int64_t>(asked)));
  if (fit < asked) {
    refusals.push_back(fmt::format(
        "{} on {} of {} nodes asked: ModelQuota {} allows {} of {} copies in namespace {}, the "
        "namespace's other revisions hold {} and one copy of this revision is {}",
        kind.copies, fit, asked, kind.limited_by, core::FormatBytes(*kind.limit), kind.copies,
        namespace_name, core::FormatBytes(kind.others), core::FormatBytes(bytes)));
  }
  return fit;
}

// Copies times bytes, saturating: a revision of kMaxFiles files of kMaxFileSize on thousands of
// nodes would overflow.
std::int64_t CopiesBytes(std::size_t copies, std::int64_t bytes) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(static_cast<std::int64_t>(copies), bytes, &product)) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return product;
}

}  // namespace

QuotaGrant GrantWithinQuota(const QuotaAsk& ask, const api::NamespaceQuota& quota,
                            const api::QuotaBytes& others, const std::string& namespace_name) {
  QuotaGrant grant;
  const std::size_t prestaged =
      Fit({.copies = "prestaged",
           .limit = quota.prestaged_bytes,
           .limited_by = quota.prestaged_by,
           .others = others.prestaged_bytes},
          ask.bytes_per_copy, ask.prestage_nodes.size(), namespace_name, grant.refusals);
  const std::size_t pinned =
      Fit({.copies = "pinned",
           .limit = quota.pinned_bytes,
           .limited_by = quota.pinned_by,
           .others = others.pinned_bytes},
          ask.bytes_per_copy, ask.pinned_nodes.size(), namespace_name, grant.refusals);
  grant.prestage_nodes.assign(ask.prestage_nodes.begin(),
                              ask.prestage_nodes.begin() + static_cast<std::ptrdiff_t>(prestaged));
  grant.pinned_nodes.assign(ask.pinned_nodes.begin(),
                            ask.pinned_nodes.begin() + static_cast<std::ptrdiff_t>(pinned));
  grant.charge = {.prestaged_bytes = CopiesBytes(prestaged, ask.bytes_per_copy),
                  .pinned_bytes = CopiesBytes(pinned, ask.bytes_per_copy)};
  return grant;
}

std::optional<std::string> PrestageBeyondQuota(std::int64_t bytes_per_copy, std::int32_t nodes,
                                               const api::NamespaceQuota& quota,
                                               const std::string& namespace_name) {
  if (!quota.prestaged_bytes || nodes <= 0 || bytes_per_copy <= 0) return std::nullopt;
  const std::int64_t asked = CopiesBytes(static_cast<std::size_t>(nodes), bytes_per_copy);
  if (asked <= *quota.prestaged_bytes) return std::nullopt;
  return fmt::format(
      "spec.prestage.nodes {} asks for {} of prestaged copies ({} each), and ModelQuota {} "
      "allows {} in namespace {} for all of its revisions together; ask for at most {} nodes",
      nodes, core::FormatBytes(asked), core::FormatBytes(bytes_per_copy), quota.prestaged_by,
      core::FormatBytes(*quota.prestaged_bytes), namespace_name,
      *quota.prestaged_bytes / bytes_per_copy);
}

}  // namespace modelplane::controller
