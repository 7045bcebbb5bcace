#include "node-agent/possession/possession_failure.h"

#include <string_view>

#include <fmt/format.h>

#include "core/api/model_cache.h"
#include "core/api/source_refusal.h"

namespace modelplane::agent {
namespace {

PossessionFailure Failure(std::string_view reason, std::string_view why) {
  return {.reason = std::string(reason),
          .message = fmt::format("{}, so bytes this node holds for another revision are not "
                                 "reused for it; details are in the node agent's log (event "
                                 "possession_not_proven)",
                                 why)};
}

}  // namespace

PossessionFailure DescribePossessionFailure(const core::Error& error) {
  if (auto refusal = core::api::SourceRefusalOf(error.code())) {
    return Failure(refusal->reason, fmt::format("the revision's own sources {}", refusal->clause));
  }
  return Failure(core::api::kCacheReasonPossessionNotProven,
                 "the revision's own sources did not serve the bytes its files name");
}

}  // namespace modelplane::agent
