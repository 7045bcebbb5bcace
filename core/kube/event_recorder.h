// Records Kubernetes Events (events.k8s.io/v1) about objects, with de-duplication: the same
// (object, type, reason, note) within the window updates one Event's series count instead of
// creating another, so a controller stuck on an invalid object does not flood etcd.
// Thread safety: Record may be called from any thread.
#pragma once

#include <chrono>
#include <list>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/clock/clock.h"
#include "core/kube/kube_client.h"

namespace modelplane::core {

struct EventRecorderOptions {
  std::string reporting_controller;  // e.g. "modelplane.io/operator"
  std::string reporting_instance;    // e.g. the pod name
  std::chrono::minutes dedup_window{10};
  std::size_t max_tracked = 4096;  // remembered (object, reason, note) keys; oldest dropped
};

class EventRecorder {
 public:
  EventRecorder(KubeClient& client, EventRecorderOptions options, const Clock& clock);

  // `regarding` is the object the event is about (needs kind/apiVersion/metadata).
  // `type` is "Normal" or "Warning". Returns the Event's name.
  [[nodiscard]] Result<std::string> Record(const nlohmann::json& regarding, const std::string& type,
                                           const std::string& reason, const std::string& action,
                                           const std::string& note);

 private:
  struct Tracked {
    std::string namespace_name;
    std::string event_name;
    int count = 1;
    Clock::SteadyTime last_seen;
    std::list<std::string>::iterator age;
  };

  KubeClient& client_;
  const EventRecorderOptions options_;
  const Clock& clock_;
  std::mutex mutex_;
  std::unordered_map<std::string, Tracked> tracked_;
  std::list<std::string> oldest_first_;
  std::mt19937_64 random_{std::random_device{}()};  // event name suffixes
};

}  // namespace modelplane::core
