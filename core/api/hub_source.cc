#include "core/api/hub_source.h"

#include <algorithm>
#include <cctype>

namespace modelplane::core::api {
namespace {

constexpr std::size_t kMaxRepositoryPart = 96;

bool IsRepositoryLetter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

std::string CheckRepositoryPart(std::string_view part) {
  if (part.empty() || part.size() > kMaxRepositoryPart) {
    return "each part of org/name must hold 1 to 96 characters";
  }
  if (!IsRepositoryLetter(part.front()) || !IsRepositoryLetter(part.back())) {
    return "each part of org/name must start and end with a letter or digit";
  }
  const bool allowed = std::ranges::all_of(
      part, [](char c) { return IsRepositoryLetter(c) || c == '-' || c == '_' || c == '.'; });
  if (!allowed) return "may hold only letters, digits, '-', '_', '.' and one '/'";
  if (part.find("--") != std::string_view::npos || part.find("..") != std::string_view::npos) {
    return "must not contain \"--\" or \"..\"";
  }
  return "";
}

}  // namespace

const HubLocation* HubLocationOf(const ModelSource& source) {
  if (source.type == kSourceHuggingFace && source.hugging_face) return &*source.hugging_face;
  if (source.type == kSourceModelScope && source.model_scope) return &*source.model_scope;
  return nullptr;
}

std::string HubEndpoint(const ModelSource& source) {
  const HubLocation* location = HubLocationOf(source);
  std::string endpoint;
  if (location != nullptr && !location->endpoint.empty()) {
    endpoint = location->endpoint;
  } else {
    endpoint = source.type == kSourceModelScope ? kModelScopeEndpoint : kHuggingFaceEndpoint;
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  return endpoint;
}

std::string CheckHubRepository(std::string_view repository) {
  const std::size_t slash = repository.find('/');
  if (slash == std::string_view::npos) return CheckRepositoryPart(repository);
  if (repository.find('/', slash + 1) != std::string_view::npos) {
    return "must be \"name\" or \"org/name\" (one '/')";
  }
  if (std::string problem = CheckRepositoryPart(repository.substr(0, slash)); !problem.empty()) {
    return problem;
  }
  return CheckRepositoryPart(repository.substr(slash + 1));
}

std::string CheckHubCommit(std::string_view commit) {
  const bool hex = commit.size() == 40 && std::ranges::all_of(commit, [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                   });
  if (!hex) {
    return "must be a commit (40 lower-case hex digits); `kubectl modelplane import` resolves a "
           "branch or tag to one";
  }
  return "";
}

}  // namespace modelplane::core::api
