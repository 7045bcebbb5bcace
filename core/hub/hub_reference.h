// What a user names on the command line to import from a hub: "hf://org/name[@revision]" for
// the Hugging Face Hub, "modelscope://org/name[@revision]" for ModelScope.
//
// The revision is a branch, a tag or a commit, as the user wants to remember it; the importer
// resolves it to a commit once. Without "@revision" it is the hub's default branch ("main" on
// the Hugging Face Hub, "master" on ModelScope).
// The repository follows core/api/hub_source.h's grammar; the revision is 1 to 256 visible
// ASCII characters without "..", since it travels percent-encoded in a URL path and is written
// into spec.repositoryRevision.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

struct HubReference {
  std::string source_type;  // core::api::kSourceHuggingFace or kSourceModelScope
  std::string repository;   // "org/name" or "name"
  std::string revision;     // as given, or the hub's default branch

  friend bool operator==(const HubReference&, const HubReference&) = default;
};

// kInvalidArgument naming what is wrong and the form expected.
[[nodiscard]] Result<HubReference> ParseHubReference(std::string_view text);

}  // namespace modelplane::core
