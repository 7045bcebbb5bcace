// What a huggingFace or modelScope source means beyond its fields: the hub each type defaults
// to, which location a source carries, and the grammar of a repository name and a commit, which
// end up in URL paths. The validator, the source policy, the agent and `kubectl modelplane
// import` all read a hub source through these functions.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/api/model_revision.h"

namespace modelplane::core::api {

inline constexpr std::string_view kHuggingFaceEndpoint = "https://huggingface.co";
inline constexpr std::string_view kModelScopeEndpoint = "https://www.modelscope.cn";

// The source's hub location (huggingFace or modelScope), or null for any other type.
[[nodiscard]] const HubLocation* HubLocationOf(const ModelSource& source);

// The endpoint requests go to: the location's own (a mirror), else the hub's for the type,
// without a trailing '/'.
[[nodiscard]] std::string HubEndpoint(const ModelSource& source);

// "name" or "org/name": each part 1-96 letters, digits, '-', '_' and '.', starting and ending
// with a letter or digit, without "--" or "..", as the Hugging Face Hub names repositories.
[[nodiscard]] std::string CheckHubRepository(std::string_view repository);

// Exactly 40 lower-case hex digits: a git commit, so that a moved branch or tag changes nothing.
[[nodiscard]] std::string CheckHubCommit(std::string_view commit);

}  // namespace modelplane::core::api
