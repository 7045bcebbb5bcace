#include "node-agent/controller/status_pacer.h"

#include <algorithm>

#include "core/kube/resource_version.h"

namespace modelplane::agent {

using nlohmann::json;

json StatusPacer::ShapeOf(json status) {
  if (auto revisions = status.find("revisions");
      revisions != status.end() && revisions->is_array()) {
    for (json& entry : *revisions) {
      entry.erase("bytesDone");
      entry.erase("bytesByTier");
      entry.erase("uniqueBytes");
      entry.erase("goodputBytesPerSecond");
      entry.erase("expectedFinishSeconds");
    }
  }
  for (const char* count : {"usedBytes", "reservedBytes", "reclaimableBytes", "protectedBytes"}) {
    status.erase(count);
  }
  status.erase("sources");  // telemetry moves with the bytes
  // A spec change that changes nothing else here (the operator's peers or holdings) only moves
  // the generation; written with the next progress (kubectl modelplane cache shows the lag).
  status.erase("observedGeneration");
  return status;
}

StatusPacer::Decision StatusPacer::Decide(const json& desired, const json& stored,
                                          std::string_view stored_version,
                                          core::Clock::SteadyTime now, Duration progress_interval,
                                          Duration status_interval) {
  const auto order = core::CompareResourceVersions(stored_version, last_answer_version_);
  // Older than this agent's last write: the informer has not caught up, nothing to repair.
  const bool trailing = order && *order == std::strong_ordering::less;
  const bool differs = !last_answer_.is_null() && !trailing && stored != last_answer_;
  if (!differs) {
    differs_since_.reset();
  } else if (!differs_since_) {
    differs_since_ = now;
  }
  // A later version that differs was written by someone else; an unordered one may still be
  // this agent's own write on its way.
  const bool later = order && *order == std::strong_ordering::greater;
  Decision decision;
  decision.overwritten = differs && (later || now - *differs_since_ >= status_interval);
  if (desired == last_status_ && !decision.overwritten) return decision;
  const Duration since = now - last_write_;
  const Duration interval = std::max(progress_interval, status_interval);
  if (!decision.overwritten && ShapeOf(desired) == last_shape_ && since < interval) {
    decision.wait = std::min(interval - since, status_interval);
    return decision;
  }
  decision.write = true;
  return decision;
}

void StatusPacer::Written(const json& desired, json answer, std::string answer_version,
                          core::Clock::SteadyTime now) {
  last_status_ = desired;
  last_shape_ = ShapeOf(desired);
  last_answer_ = std::move(answer);
  last_answer_version_ = std::move(answer_version);
  last_write_ = now;
  differs_since_.reset();
}

}  // namespace modelplane::agent
