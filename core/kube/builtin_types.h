// Typed views of the built-in objects modelplane's components read and write: Pod, Node,
// Lease and Event, with only the fields they use.
//
// Each view keeps the whole object it was read from in `raw`; ToJson writes the typed fields
// over that, so an object read, changed and written back loses nothing the view does not
// model (a view must never be the reason an update drops a field another controller owns).
// Parsing tolerates missing fields but rejects wrong JSON types with the field's path.
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/object_meta.h"
#include "core/error/error.h"

namespace modelplane::core {

struct PodCondition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
};

struct Pod {
  api::ObjectMeta metadata;
  std::string node_name;
  std::string scheduler_name;
  std::vector<std::string> scheduling_gates;
  std::vector<std::string> readiness_gates;  // condition types
  std::string phase;
  std::vector<PodCondition> conditions;
  nlohmann::json raw = nlohmann::json::object();

  [[nodiscard]] const PodCondition* FindCondition(const std::string& type) const;
};

struct Node {
  api::ObjectMeta metadata;
  bool unschedulable = false;
  std::map<std::string, std::string> allocatable;  // quantities as the API writes them
  bool ready = false;                              // the Ready condition is True
  nlohmann::json raw = nlohmann::json::object();
};

struct Lease {
  api::ObjectMeta metadata;
  std::string holder_identity;
  std::int64_t lease_duration_seconds = 0;
  std::string acquire_time;  // MicroTime text
  std::string renew_time;
  std::int64_t lease_transitions = 0;
  nlohmann::json raw = nlohmann::json::object();
};

struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_name;
  std::string name;
  std::string uid;
};

struct Event {
  api::ObjectMeta metadata;
  std::string type;  // Normal | Warning
  std::string reason;
  std::string action;
  std::string note;
  ObjectReference regarding;
  std::int64_t series_count = 0;  // 0 when the event has no series
  nlohmann::json raw = nlohmann::json::object();
};

[[nodiscard]] Result<Pod> PodFromJson(const nlohmann::json& value);
[[nodiscard]] Result<Node> NodeFromJson(const nlohmann::json& value);
[[nodiscard]] Result<Lease> LeaseFromJson(const nlohmann::json& value);
[[nodiscard]] Result<Event> EventFromJson(const nlohmann::json& value);
[[nodiscard]] nlohmann::json ToJson(const Pod& pod);
[[nodiscard]] nlohmann::json ToJson(const Node& node);
[[nodiscard]] nlohmann::json ToJson(const Lease& lease);
[[nodiscard]] nlohmann::json ToJson(const Event& event);

}  // namespace modelplane::core
