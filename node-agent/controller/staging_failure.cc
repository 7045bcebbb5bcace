#include "node-agent/controller/staging_failure.h"

#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/api/model_cache.h"
#include "core/api/source_refusal.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;

// At most this many files and sources are named; status stays small.
constexpr std::size_t kMaxNamed = 4;

std::string Joined(const std::set<std::string>& names) {
  std::vector<std::string> shown;
  for (const std::string& name : names) {
    if (shown.size() == kMaxNamed) {
      shown.push_back(fmt::format("and {} more", names.size() - kMaxNamed));
      break;
    }
    shown.push_back(name);
  }
  return fmt::format("{}", fmt::join(shown, ", "));
}

// How much a code says about why a file could not be had: a mismatch or a refusal explains more
// than "unavailable", which is also what the engine says once every source is used up.
int Weight(ErrorCode code) {
  switch (code) {
    case ErrorCode::kDataLoss: return 5;
    case ErrorCode::kAddressDenied:
    case ErrorCode::kPermissionDenied:
    case ErrorCode::kUnauthenticated: return 4;
    case ErrorCode::kNotFound: return 3;
    case ErrorCode::kResourceExhausted: return 2;
    case ErrorCode::kUnavailable:
    case ErrorCode::kDeadlineExceeded:
    case ErrorCode::kThrottled: return 1;
    default: return 0;
  }
}

StagingFailure Describe(ErrorCode code) {
  if (auto refusal = core::api::SourceRefusalOf(code)) {
    return {std::string(refusal->reason),
            fmt::format("the revision's sources {}", refusal->clause)};
  }
  switch (code) {
    case ErrorCode::kDataLoss:
      return {std::string(core::api::kCacheReasonVerificationFailed),
              "bytes failed their sha256 check or were truncated"};
    case ErrorCode::kResourceExhausted:
      return {std::string(core::api::kCacheReasonNoSpace), "the cache ran out of space or buffers"};
    default: return {std::string(core::api::kCacheReasonStagingFailed), "the staging failed"};
  }
}

}  // namespace

StagingFailure DescribeStagingFailure(const core::Error& error, const FetchReport& report) {
  ErrorCode code = error.code();
  std::set<std::string> files;
  std::set<std::string> sources;
  for (const FileReport& file : report.files) {
    if (file.source_failures.empty()) continue;
    if (!file.times.published) files.insert(file.path);
    for (const SourceFailure& failed : file.source_failures) {
      sources.insert(failed.source);
      if (!file.times.published && Weight(failed.code) > Weight(code)) code = failed.code;
    }
  }
  if (!report.pace_verdict.empty()) {
    // The engine's own numbers, with no source's answer in them.
    return {std::string(core::api::kCacheReasonSourceTooSlow),
            report.pace_verdict +
                "; details are in the node agent's log (events fetch_gave_up, staging_failed)"};
  }
  StagingFailure failure = Describe(code);
  if (!files.empty()) failure.message += fmt::format("; files: {}", Joined(files));
  if (!sources.empty())
    failure.message += fmt::format("; sources given up on: {}", Joined(sources));
  failure.message += "; details are in the node agent's log (event staging_failed)";
  return failure;
}

}  // namespace modelplane::agent
