#include "node-agent/peer/reader_admission.h"

#include <iterator>

namespace modelplane::agent {

ReaderAdmission::ReaderAdmission(std::size_t max_readers, std::chrono::milliseconds keep,
                                 const core::Clock& clock)
    : max_readers_(max_readers), keep_(keep), clock_(clock) {}

void ReaderAdmission::ExpireLocked(core::Clock::SteadyTime now) const {
  std::erase_if(places_, [&](const auto& entry) {
    return entry.second.in_flight == 0 && now - entry.second.last_ended >= keep_;
  });
}

bool ReaderAdmission::TryAdmit(std::string_view reader) {
  std::lock_guard lock(mutex_);
  ExpireLocked(clock_.Now());
  auto place = places_.find(reader);
  if (place == places_.end()) {
    if (max_readers_ > 0 && places_.size() >= max_readers_) return false;
    place = places_.emplace(std::string(reader), Place{}).first;
  }
  ++place->second.in_flight;
  return true;
}

void ReaderAdmission::Finished(std::string_view reader) {
  std::lock_guard lock(mutex_);
  const auto place = places_.find(reader);
  if (place == places_.end()) return;
  if (place->second.in_flight > 0) --place->second.in_flight;
  place->second.last_ended = clock_.Now();
}

std::size_t ReaderAdmission::readers() const {
  std::lock_guard lock(mutex_);
  ExpireLocked(clock_.Now());
  return places_.size();
}

std::string ReaderOf(std::string_view remote_endpoint, const std::string* certificate_subject) {
  if (certificate_subject != nullptr) return "certificate:" + *certificate_subject;
  const auto colon = remote_endpoint.rfind(':');
  const bool bracketed = !remote_endpoint.empty() && remote_endpoint.front() == '[';
  if (colon == std::string_view::npos || (bracketed && remote_endpoint.find(']') > colon)) {
    return std::string(remote_endpoint);
  }
  return std::string(remote_endpoint.substr(0, colon));
}

}  // namespace modelplane::agent
