// Asks the API server who a bearer token belongs to (TokenReview, authentication.k8s.io/v1),
// for a server that authenticates callers by their ServiceAccount tokens (the operator's
// credentials endpoint). The token travels only in the request body, which is never logged.
// Thread safety: a pure function over a thread-safe client.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"
#include "core/kube/kube_client.h"

namespace modelplane::core {

// Extra fields the API server adds for a token bound to a pod.
inline constexpr std::string_view kTokenNodeNameExtra = "authentication.kubernetes.io/node-name";
inline constexpr std::string_view kTokenPodNameExtra = "authentication.kubernetes.io/pod-name";
inline constexpr std::string_view kTokenPodUidExtra = "authentication.kubernetes.io/pod-uid";

struct TokenReviewResult {
  bool authenticated = false;
  std::string username;  // "system:serviceaccount:<namespace>:<name>" for a ServiceAccount
  std::vector<std::string> audiences;
  std::map<std::string, std::vector<std::string>> extra;
  std::string error;  // the API server's reason when not authenticated
};

// `audiences`: the token must have been issued for one of them (empty: the API server's own).
// An error means the review itself failed (the API server unreachable or refusing the review);
// a token that is not valid is authenticated == false.
[[nodiscard]] Result<TokenReviewResult> ReviewToken(KubeClient& client, std::string_view token,
                                                    const std::vector<std::string>& audiences);

// The same from a TokenReview's JSON answer (for tests and the function above).
[[nodiscard]] TokenReviewResult TokenReviewFromJson(const nlohmann::json& review);

}  // namespace modelplane::core
