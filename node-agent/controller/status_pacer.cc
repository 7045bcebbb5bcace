#include "node-agent/controller/status_pacer.h"

#include <algorithm>

namespace modelplane::agent {

using nlohmann::json;

json StatusPacer::ShapeOf(json status) {
  if (auto revisions = status.find("revisions");
      revisions != status.end() && revisions->is_array()) {
    for (json& entry : *revisions) {
      entry.erase("bytesDone");
      entry.erase("bytesByTier");
      entry.erase("uniqueBytes");
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
                                          core::Clock::SteadyTime now, Duration progress_interval,
                                          Duration status_interval) {
  const bool differs = !last_answer_.is_null() && stored != last_answer_;
  if (!differs) {
    differs_since_.reset();
  } else if (!differs_since_) {
    differs_since_ = now;
  }
  Decision decision;
  decision.overwritten = differs && now - *differs_since_ >= status_interval;
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

void StatusPacer::Written(const json& desired, json answer, core::Clock::SteadyTime now) {
  last_status_ = desired;
  last_shape_ = ShapeOf(desired);
  last_answer_ = std::move(answer);
  last_write_ = now;
  differs_since_.reset();
}

}  // namespace modelplane::agent
