// Reads a Kubernetes watch: one long GET with watch=1 whose chunked body carries one JSON
// event per line ({"type": "ADDED", "object": {...}}).
//
// This uses Boost.Beast directly rather than cpprestsdk: the body must be consumed line by line
// as chunks arrive, every read needs its own deadline (a silent connection must not hang an
// informer), and another thread must be able to cancel a blocked read at once.
// Thread safety: one Watcher may run many watches concurrently, each on its caller's thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/cancel/cancellation_token.h"
#include "core/error/error.h"
#include "core/kube/kube_config.h"
#include "core/kube/resource_type.h"

namespace modelplane::core {

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  nlohmann::json object;
};

// Parses one line of a watch stream. An ERROR event parses fine (its object is a Status).
[[nodiscard]] Result<WatchEvent> ParseWatchEvent(std::string_view line);

struct WatchOptions {
  std::string resource_version;  // resume point; "" starts at "now" (avoid: it loses events)
  std::string label_selector;
  std::string field_selector;
  int timeout_seconds = 300;  // the server ends the watch after this; we then re-watch
  bool allow_bookmarks = true;
  std::chrono::seconds connect_timeout{10};
  std::size_t max_event_bytes = 16 << 20;  // one event line; bigger is an error
};

// Called for each event in order. Returning an error ends the watch with that error.
using WatchEventHandler = std::function<Status(WatchEvent event)>;

class Watcher {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Watcher>> Create(KubeConfig config);

  // Blocks until the server ends the stream (Ok), the stream fails, an ERROR event arrives
  // (kGone for 410 "too old resource version", otherwise its code), or `cancel` fires
  // (kCancelled).
  [[nodiscard]] Status Watch(const ResourceType& type, const std::string& namespace_name,
                             const WatchOptions& options, const WatchEventHandler& on_event,
                             CancellationToken& cancel) const;

 private:
  explicit Watcher(KubeConfig config) : config_(std::move(config)) {}
  KubeConfig config_;
};

}  // namespace modelplane::core
