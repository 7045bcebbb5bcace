#include "node-agent/fetch/range_scheduler.h"

#include <algorithm>

namespace modelplane::agent {

RangeScheduler::RangeScheduler(Options options, std::size_t file_count)
    : options_{.files_in_flight = std::max<std::size_t>(1, options.files_in_flight),
               .window = std::max<std::size_t>(1, options.window)},
      files_(file_count) {}

void RangeScheduler::SetPending(std::size_t file, std::vector<std::size_t> ranges,
                                std::size_t hashed) {
  File& state = files_.at(file);
  state.pending.assign(ranges.begin(), ranges.end());
  state.hashed = hashed;
  state.scheduled = true;
}

void RangeScheduler::Hashed(std::size_t file, std::size_t next_unhashed) {
  File& state = files_.at(file);
  state.hashed = std::max(state.hashed, next_unhashed);
}

void RangeScheduler::Finished(std::size_t file) {
  File& state = files_.at(file);
  state.finished = true;
  state.pending.clear();
  std::erase(in_flight_, file);
}

bool RangeScheduler::Ready(const File& file) const {
  return !file.pending.empty() && file.pending.front() < file.hashed + options_.window;
}

void RangeScheduler::Admit() {
  while (in_flight_.size() < options_.files_in_flight && next_to_admit_ < files_.size()) {
    const File& candidate = files_[next_to_admit_];
    if (candidate.scheduled && !candidate.finished) in_flight_.push_back(next_to_admit_);
    ++next_to_admit_;
  }
}

std::optional<RangeScheduler::Task> RangeScheduler::Next() {
  Admit();
  for (const std::size_t file : in_flight_) {
    File& state = files_[file];
    if (!Ready(state)) continue;
    const Task task{.file = file, .range = state.pending.front()};
    state.pending.pop_front();
    return task;
  }
  return std::nullopt;
}

bool RangeScheduler::HasWork() {
  Admit();
  return std::ranges::any_of(in_flight_, [&](std::size_t file) { return Ready(files_[file]); });
}

}  // namespace modelplane::agent
