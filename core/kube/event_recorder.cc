#include "core/kube/event_recorder.h"

#include <random>

#include <fmt/format.h>

#include "core/kube/leader_elector.h"

namespace modelplane::core {

using nlohmann::json;

namespace {
constexpr std::size_t kMaxNoteBytes = 1024;  // the API server rejects longer notes
}

EventRecorder::EventRecorder(KubeClient& client, EventRecorderOptions options, const Clock& clock)
    : client_(client), options_(std::move(options)), clock_(clock) {}

Result<std::string> EventRecorder::Record(const json& regarding, const std::string& type,
                                          const std::string& reason, const std::string& action,
                                          const std::string& note_in) {
  const json metadata = regarding.value("metadata", json::object());
  const std::string object_name = metadata.value("name", "");
  const std::string object_namespace = metadata.value("namespace", "");
  const std::string event_namespace = object_namespace.empty() ? "default" : object_namespace;
  const std::string note = note_in.substr(0, kMaxNoteBytes);
  const std::string key =
      fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", regarding.value("kind", ""), object_namespace,
                  object_name, type, reason, note);
  const auto now = clock_.Now();
  const std::string now_text = FormatMicroTime(clock_.WallNow());

  std::unique_lock lock(mutex_);
  if (auto found = tracked_.find(key);
      found != tracked_.end() && now - found->second.last_seen < options_.dedup_window) {
    Tracked& tracked = found->second;
    tracked.count++;
    tracked.last_seen = now;
    oldest_first_.splice(oldest_first_.end(), oldest_first_, tracked.age);
    const json patch = {{"series", {{"count", tracked.count}, {"lastObservedTime", now_text}}}};
    const std::string ns = tracked.namespace_name;
    const std::string name = tracked.event_name;
    lock.unlock();
    auto patched = client_.Patch(resources::Events(), ns, name, PatchType::kMerge, patch);
    if (patched) return name;
    if (patched.error().code() != ErrorCode::kNotFound) return std::unexpected(patched.error());
    lock.lock();
    tracked_.erase(key);  // the Event expired on the server: record a fresh one
  }
  const std::string event_name = fmt::format("{}.{:016x}", object_name, random_());
  lock.unlock();
  json event = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", event_name}, {"namespace", event_namespace}}},
      {"eventTime", now_text},
      {"reportingController", options_.reporting_controller},
      {"reportingInstance", options_.reporting_instance},
      {"action", action},
      {"reason", reason},
      {"type", type},
      {"note", note},
      {"regarding",
       {{"apiVersion", regarding.value("apiVersion", "")},
        {"kind", regarding.value("kind", "")},
        {"name", object_name},
        {"namespace", object_namespace},
        {"uid", metadata.value("uid", "")},
        {"resourceVersion", metadata.value("resourceVersion", "")}}},
  };
  auto created = client_.Create(resources::Events(), event_namespace, event);
  if (!created) return std::unexpected(created.error());

  lock.lock();
  if (tracked_.size() >= options_.max_tracked && !oldest_first_.empty()) {
    tracked_.erase(oldest_first_.front());
    oldest_first_.pop_front();
  }
  if (auto found = tracked_.find(key); found != tracked_.end()) {
    oldest_first_.erase(found->second.age);
    tracked_.erase(found);
  }
  oldest_first_.push_back(key);
  tracked_[key] = Tracked{event_namespace, event_name, 1, now, std::prev(oldest_first_.end())};
  return event_name;
}

}  // namespace modelplane::core
