#include "core/kube/token_review.h"

namespace modelplane::core {
namespace {

std::vector<std::string> Strings(const nlohmann::json& value) {
  std::vector<std::string> result;
  if (!value.is_array()) return result;
  for (const auto& item : value) {
    if (item.is_string()) result.push_back(item.get<std::string>());
  }
  return result;
}

}  // namespace

TokenReviewResult TokenReviewFromJson(const nlohmann::json& review) {
  TokenReviewResult result;
  const auto status = review.find("status");
  if (status == review.end() || !status->is_object()) return result;
  result.authenticated = status->value("authenticated", false);
  result.error = status->value("error", "");
  if (const auto audiences = status->find("audiences"); audiences != status->end()) {
    result.audiences = Strings(*audiences);
  }
  const auto user = status->find("user");
  if (user == status->end() || !user->is_object()) return result;
  result.username = user->value("username", "");
  if (const auto extra = user->find("extra"); extra != user->end() && extra->is_object()) {
    for (const auto& [key, values] : extra->items()) result.extra[key] = Strings(values);
  }
  return result;
}

Result<TokenReviewResult> ReviewToken(KubeClient& client, std::string_view token,
                                      const std::vector<std::string>& audiences) {
  nlohmann::json spec = {{"token", std::string(token)}};
  if (!audiences.empty()) spec["audiences"] = audiences;
  const nlohmann::json review = {{"apiVersion", "authentication.k8s.io/v1"},
                                 {"kind", "TokenReview"},
                                 {"spec", std::move(spec)}};
  auto answer = client.Request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", review,
                               "application/json");
  if (!answer) return std::unexpected(answer.error().Wrap("TokenReview"));
  return TokenReviewFromJson(*answer);
}

}  // namespace modelplane::core
