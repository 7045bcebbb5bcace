#include "node-agent/controller/revision_reader.h"

#include "core/kube/resource_type.h"

namespace modelplane::agent {

core::Status RevisionReader::Sync(const std::map<std::string, std::string>& wanted,
                                  const DigestOf& digest_of) {
  const auto now = clock_.Now();
  std::erase_if(entries_, [&](const auto& item) { return !wanted.contains(item.first); });
  std::optional<core::Error> first_error;
  for (const auto& [key, expected] : wanted) {
    auto found = entries_.find(key);
    bool due = found == entries_.end();
    if (!due) {
      const Entry& entry = found->second;
      const auto age = now - entry.read_at;
      due = age >= options_.refresh_period || (entry.retry_soon && age >= options_.retry_period);
      if (!due && !expected.empty() && entry.object && age >= options_.retry_period) {
        const auto digest = digest_of(key);
        due = !digest || core::FormatDigest(*digest) != expected;
      }
    }
    if (!due) continue;
    const auto slash = key.find('/');
    if (slash == std::string::npos) continue;
    ++reads_;
    auto read =
        client_.Get(core::resources::ModelRevisions(), key.substr(0, slash), key.substr(slash + 1));
    Entry& entry = entries_[key];
    entry.read_at = now;
    if (read) {
      entry.object = std::make_shared<const nlohmann::json>(std::move(*read));
      entry.retry_soon = false;  // a digest other than the operator's is found at the next Sync
    } else if (read.error().code() == core::ErrorCode::kNotFound) {
      entry.object = nullptr;
      entry.retry_soon = true;
    } else {
      entry.retry_soon = true;  // keep the last copy until a read succeeds
      if (!first_error) first_error = read.error().Wrap("reading ModelRevision " + key);
    }
  }
  if (first_error) return std::unexpected(*first_error);
  return core::Ok();
}

std::vector<core::ObjectPtr> RevisionReader::Objects() const {
  std::vector<core::ObjectPtr> objects;
  for (const auto& [key, entry] : entries_) {
    if (entry.object) objects.push_back(entry.object);
  }
  return objects;
}

std::optional<core::Clock::SteadyTime> RevisionReader::NextRetry() const {
  std::optional<core::Clock::SteadyTime> next;
  for (const auto& [key, entry] : entries_) {
    if (!entry.retry_soon) continue;
    const auto at = entry.read_at + options_.retry_period;
    next = next ? std::min(*next, at) : at;
  }
  return next;
}

}  // namespace modelplane::agent
