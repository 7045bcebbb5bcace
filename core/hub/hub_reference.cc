#include "core/hub/hub_reference.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/api/hub_source.h"
#include "core/api/limits.h"

namespace modelplane::core {
namespace {

struct HubScheme {
  std::string_view prefix;
  std::string_view source_type;
  std::string_view default_revision;
};

// Each hub's default branch: the Hugging Face Hub's "main", ModelScope's "master".
constexpr std::array<HubScheme, 2> kHubSchemes = {{
    {"hf://", api::kSourceHuggingFace, "main"},
    {"modelscope://", api::kSourceModelScope, "master"},
}};

constexpr std::string_view kReferenceForm =
    "hf://org/name[@revision] or modelscope://org/name[@revision]";

std::string CheckRevision(std::string_view revision) {
  if (revision.empty() || revision.size() > api::kMaxShortString) {
    return fmt::format("has a revision after '@' that does not hold 1 to {} characters",
                       api::kMaxShortString);
  }
  const bool visible = std::ranges::all_of(revision, [](char c) { return c > ' ' && c < 0x7f; });
  if (!visible) return "has a revision that is not visible ASCII without spaces";
  if (revision.find("..") != std::string_view::npos) return "has a revision with \"..\" in it";
  return "";
}

std::unexpected<Error> NotAReference(std::string_view text, std::string_view problem) {
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("\"{}\" {} (expected {})", text, problem, kReferenceForm));
}

}  // namespace

Result<HubReference> ParseHubReference(std::string_view text) {
  const auto scheme = std::ranges::find_if(kHubSchemes, [text](const HubScheme& candidate) {
    return text.starts_with(candidate.prefix);
  });
  if (scheme == kHubSchemes.end()) {
    return NotAReference(text, "is not a hub reference");
  }
  std::string_view rest = text.substr(scheme->prefix.size());
  HubReference reference{.source_type = std::string(scheme->source_type)};
  if (const std::size_t at = rest.find('@'); at != std::string_view::npos) {
    reference.revision = std::string(rest.substr(at + 1));
    if (const std::string problem = CheckRevision(reference.revision); !problem.empty()) {
      return NotAReference(text, problem);
    }
    rest = rest.substr(0, at);
  } else {
    reference.revision = std::string(scheme->default_revision);
  }
  if (const std::string problem = api::CheckHubRepository(rest); !problem.empty()) {
    return NotAReference(text, fmt::format("has an invalid repository ({})", problem));
  }
  reference.repository = std::string(rest);
  return reference;
}

}  // namespace modelplane::core
