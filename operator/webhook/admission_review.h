// The admission.k8s.io/v1 AdmissionReview wire format, read from untrusted bytes with the
// bounded JSON parser (size, depth, duplicate keys) and answered as the API server expects: the
// request's uid, allowed, a status with code and message when refused, a base64 JSONPatch when
// the object changes, and warnings.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error/error.h"

namespace modelplane::controller {

// A pod with many containers stays far below this; the API server's own request limit is 3 MiB.
inline constexpr std::size_t kMaxAdmissionReviewBytes = 3 * 1024 * 1024;

// The implicit move operations only call noexcept ones (nlohmann::json's included); clang-tidy 16
// looks through json's into calls that could throw.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct AdmissionRequest {
  std::string uid;
  std::string operation;  // CREATE, UPDATE, DELETE, CONNECT
  std::string group;      // of request.kind: "" for core
  std::string kind;       // "Pod"
  std::string namespace_name;
  std::string name;  // may be empty (generateName)
  bool dry_run = false;
  nlohmann::json object;  // null when absent
};

struct AdmissionVerdict {
  bool allowed = true;
  int code = 200;       // when refused: 403 for policy, 400 for a request we cannot read
  std::string message;  // when refused
  std::optional<nlohmann::json> patch;  // RFC 6902 operations
  std::vector<std::string> warnings;
};

// kInvalidArgument naming what is wrong: not JSON, over the limits, not an AdmissionReview of
// admission.k8s.io/v1, no request or uid.
[[nodiscard]] core::Result<AdmissionRequest> ParseAdmissionReview(std::string_view body);

[[nodiscard]] std::string WriteAdmissionReview(const std::string& uid,
                                               const AdmissionVerdict& verdict);

}  // namespace modelplane::controller
