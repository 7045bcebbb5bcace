#include "operator/controllers/change_reporter.h"

#include "core/api/object_key.h"

namespace modelplane::controller {

bool ChangeReporter::Report(const nlohmann::json& regarding, const std::string& type,
                            const std::string& reason, const std::string& action,
                            const std::string& note) {
  const nlohmann::json metadata = regarding.value("metadata", nlohmann::json::object());
  const std::string uid = metadata.value("uid", "");
  const std::string said = type + "\x1f" + reason + "\x1f" + note;
  {
    std::lock_guard lock(mutex_);
    if (auto found = last_.find(uid); found != last_.end()) {
      if (found->second.first == said) return false;
      oldest_first_.erase(found->second.second);
      last_.erase(found);
    }
    if (last_.size() >= max_objects_ && !oldest_first_.empty()) {
      last_.erase(oldest_first_.front());
      oldest_first_.pop_front();
    }
    oldest_first_.push_back(uid);
    last_.emplace(uid, std::make_pair(said, std::prev(oldest_first_.end())));
  }
  if (auto recorded = events_.Record(regarding, type, reason, action, note); !recorded) {
    logger_.Warn("event_record_failed",
                 {{"kind", regarding.value("kind", "")},
                  {"object", core::api::ObjectKey(metadata.value("namespace", ""),
                                                  metadata.value("name", ""))},
                  {"error", recorded.error().ToString()}});
  }
  return true;
}

}  // namespace modelplane::controller
