// Records an Event about an object only when what it says about that object changes.
//
// Controllers re-derive their messages on every pass (a revision's pass runs each time a
// staging node reports progress); the event recorder would patch the same Event's series count
// on each. This remembers the last reason and note per object uid, in a bounded map whose
// oldest entries are forgotten first (an object that comes back after that gets one repeat).
// Thread safety: Report may be called from any thread.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/kube/event_recorder.h"
#include "core/log/logger.h"

namespace modelplane::controller {

class ChangeReporter {
 public:
  ChangeReporter(core::EventRecorder& events, const core::Logger& logger,
                 std::size_t max_objects = 16384)
      : events_(events), logger_(logger), max_objects_(max_objects) {}

  // `regarding`: apiVersion, kind and metadata (name, namespace, uid) of the object. Returns
  // whether this was news (and so recorded).
  bool Report(const nlohmann::json& regarding, const std::string& type, const std::string& reason,
              const std::string& action, const std::string& note);

 private:
  core::EventRecorder& events_;
  const core::Logger& logger_;
  const std::size_t max_objects_;
  std::mutex mutex_;
  // uid -> (the last reason and note, its place in oldest_first_)
  std::unordered_map<std::string, std::pair<std::string, std::list<std::string>::iterator>> last_;
  std::list<std::string> oldest_first_;
};

}  // namespace modelplane::controller
