// An informer: lists a kind of object, then watches it, keeping an ObjectStore equal to the
// server's state and telling handlers what changed.
//
// Like client-go's reflector it resumes a broken watch from the last resourceVersion it saw
// (bookmarks included), relists when that version has expired (410 as an HTTP status or as an
// ERROR event), backs off with jitter between failures, and ends each watch after a bounded
// timeoutSeconds. A relist diffs against the store, so handlers see deletes that happened
// while the watch was down. Resync periodically re-announces every object as an update so
// level-based controllers re-check their world.
// Thread safety: handlers run one at a time on the informer's threads; the store may be read
// from anywhere. Start/Stop from the owning thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/backoff/backoff.h"
#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/kube/kube_client.h"
#include "core/kube/object_store.h"
#include "core/kube/watch_stream.h"

namespace modelplane::core {

struct InformerHandlers {
  std::function<void(const ObjectPtr& object)> on_add;
  std::function<void(const ObjectPtr& old_object, const ObjectPtr& new_object)> on_update;
  std::function<void(const ObjectPtr& object)> on_delete;
};

struct InformerOptions {
  ResourceType type;
  std::string namespace_name;  // "" = all namespaces
  std::string label_selector;
  std::string field_selector;
  std::chrono::seconds resync_period{0};  // 0 = never
  int watch_timeout_seconds = 300;
  // Bookmarks keep the resume point fresh on quiet selections; tests turn them off to make a
  // resume point go stale on purpose.
  bool allow_bookmarks = true;
  int page_size = 500;
  // Applied to every object before it is stored and handed to handlers, to keep only the
  // fields a controller reads (a cluster's pods are large; client-go's SetTransform). It must
  // keep metadata.name, namespace and resourceVersion.
  std::function<nlohmann::json(nlohmann::json)> transform;
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{30'000};
};

struct InformerStats {
  std::atomic<std::uint64_t> lists{0};
  std::atomic<std::uint64_t> watches{0};
  std::atomic<std::uint64_t> events{0};
  std::atomic<std::uint64_t> expired_relists{0};  // 410 Gone
  std::atomic<std::uint64_t> failures{0};
};

class Informer {
 public:
  Informer(KubeClient& client, const Watcher& watcher, InformerOptions options, const Clock& clock);
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;
  ~Informer();  // Stop()

  // Indexers and handlers must be added before Start.
  void AddIndexer(const std::string& name, IndexFunction function);
  void AddHandlers(InformerHandlers handlers);

  void Start();
  // Cancels the watch and waits for the informer's threads.
  void Stop();

  [[nodiscard]] bool HasSynced() const { return synced_.load(); }
  // Waits until the first list is in the store; false on timeout or stop.
  [[nodiscard]] bool WaitForSync(std::chrono::milliseconds timeout);

  [[nodiscard]] const ObjectStore& store() const { return store_; }
  [[nodiscard]] const InformerStats& stats() const { return stats_; }
  [[nodiscard]] std::string LastResourceVersion() const;
  // The last error that interrupted listing or watching, for logs and readiness.
  [[nodiscard]] std::string LastError() const;

 private:
  void Run();
  void RunResync();
  Status ListAndReplace();
  Status WatchOnce();
  Status Apply(WatchEvent event);
  std::chrono::nanoseconds NextBackoff(int failures);
  void SetResourceVersion(const std::string& version);

  KubeClient& client_;
  const Watcher& watcher_;
  const InformerOptions options_;
  const Clock& clock_;
  ObjectStore store_;
  std::vector<InformerHandlers> handlers_;
  std::mutex dispatch_mutex_;  // handlers run one at a time

  CancellationToken stop_;
  std::atomic<bool> synced_{false};
  mutable std::mutex state_mutex_;
  std::condition_variable synced_changed_;
  std::string resource_version_;
  std::string last_error_;
  std::mt19937_64 jitter_{std::random_device{}()};
  InformerStats stats_;
  std::thread runner_;
  std::thread resyncer_;
};

// Waits until every informer has its first list (true) or `stop` is cancelled (false), looking
// every 100 ms of `clock`'s time, as client-go's WaitForCacheSync does: the one wait every
// controller runs before it starts its workers.
[[nodiscard]] bool WaitForCacheSync(std::initializer_list<const Informer*> informers,
                                    CancellationToken& stop, const Clock& clock);

}  // namespace modelplane::core
