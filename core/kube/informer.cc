#include "core/kube/informer.h"

#include <algorithm>

namespace modelplane::core {

using nlohmann::json;

namespace {
std::string ResourceVersionOf(const json& object) {
  if (!object.contains("metadata") || !object["metadata"].is_object()) return "";
  return object["metadata"].value("resourceVersion", "");
}
}  // namespace

Informer::Informer(KubeClient& client, const Watcher& watcher, InformerOptions options,
                   const Clock& clock)
    : client_(client), watcher_(watcher), options_(std::move(options)), clock_(clock) {}

Informer::~Informer() {
  Stop();
}

void Informer::AddIndexer(const std::string& name, IndexFunction function) {
  store_.AddIndexer(name, std::move(function));
}

void Informer::AddHandlers(InformerHandlers handlers) {
  handlers_.push_back(std::move(handlers));
}

void Informer::Start() {
  if (runner_.joinable()) return;
  runner_ = std::thread([this] { Run(); });
  if (options_.resync_period.count() > 0) resyncer_ = std::thread([this] { RunResync(); });
}

void Informer::Stop() {
  stop_.Cancel();
  synced_changed_.notify_all();
  if (runner_.joinable()) runner_.join();
  if (resyncer_.joinable()) resyncer_.join();
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) {
  const Clock::SteadyTime deadline = clock_.Now() + timeout;
  std::unique_lock lock(state_mutex_);
  while (!synced_.load() && !stop_.cancelled() && clock_.Now() < deadline) {
    clock_.WaitUntil(lock, synced_changed_, deadline);
  }
  return synced_.load();
}

std::string Informer::LastResourceVersion() const {
  std::lock_guard lock(state_mutex_);
  return resource_version_;
}

std::string Informer::LastError() const {
  std::lock_guard lock(state_mutex_);
  return last_error_;
}

void Informer::SetResourceVersion(const std::string& version) {
  std::lock_guard lock(state_mutex_);
  resource_version_ = version;
}

std::chrono::nanoseconds Informer::NextBackoff(int failures) {
  // Jittered: many informers restarting together (an API server restart) spread their
  // reconnects instead of arriving in one wave. `failures` counts from 0 here.
  const ExponentialBackoff backoff{.initial = options_.initial_backoff,
                                   .max = options_.max_backoff};
  return backoff.Jittered(failures + 1, jitter_);
}

void Informer::Run() {
  bool need_list = true;
  int failures = 0;
  while (!stop_.cancelled()) {
    const bool listing = need_list;
    const auto started = clock_.Now();
    const std::uint64_t events_before = stats_.events.load();
    Status step = listing ? ListAndReplace() : WatchOnce();
    if (stop_.cancelled()) break;
    if (step) {
      // A list is followed by a watch; a watch that ended normally (timeoutSeconds) resumes.
      need_list = false;
      // A watch the server closes at once, again and again, must not become a hot loop.
      const bool empty_and_short = !listing && stats_.events.load() == events_before &&
                                   clock_.Now() - started < std::chrono::seconds(1);
      if (!empty_and_short) {
        failures = 0;
      } else if (!stop_.SleepFor(clock_, NextBackoff(failures++))) {
        break;
      }
      continue;
    }
    const Error& error = step.error();
    {
      std::lock_guard lock(state_mutex_);
      last_error_ = error.ToString();
    }
    if (error.code() == ErrorCode::kGone) {
      // Our resourceVersion was compacted away: only a fresh list can tell what we missed.
      stats_.expired_relists++;
      need_list = true;
      continue;
    }
    stats_.failures++;
    if (!stop_.SleepFor(clock_, NextBackoff(failures++))) break;
  }
}

Status Informer::ListAndReplace() {
  stats_.lists++;
  ListOptions list_options;
  list_options.label_selector = options_.label_selector;
  list_options.field_selector = options_.field_selector;
  list_options.limit = options_.page_size;
  auto page = client_.ListAll(options_.type, options_.namespace_name, list_options);
  if (!page) return std::unexpected(page.error());

  std::vector<ObjectPtr> objects;
  objects.reserve(page->items.size());
  for (auto& item : page->items) {
    if (options_.transform) item = options_.transform(std::move(item));
    objects.push_back(std::make_shared<const json>(std::move(item)));
  }

  std::lock_guard dispatch(dispatch_mutex_);
  // Announce adds and updates against what the store held, then deletes for what vanished.
  std::vector<std::pair<ObjectPtr, ObjectPtr>> changes;  // old (may be null), new
  changes.reserve(objects.size());
  for (const auto& object : objects) {
    ObjectPtr previous = store_.Get(ObjectStore::KeyOf(*object));
    if (previous && ResourceVersionOf(*previous) == ResourceVersionOf(*object)) continue;
    changes.emplace_back(std::move(previous), object);
  }
  std::vector<ObjectPtr> gone = store_.Replace(std::move(objects));
  SetResourceVersion(page->resource_version);
  for (const auto& [previous, current] : changes) {
    for (const auto& handlers : handlers_) {
      if (previous && handlers.on_update) handlers.on_update(previous, current);
      if (!previous && handlers.on_add) handlers.on_add(current);
    }
  }
  for (const auto& object : gone) {
    for (const auto& handlers : handlers_) {
      if (handlers.on_delete) handlers.on_delete(object);
    }
  }
  if (!synced_.exchange(true)) {
    std::lock_guard lock(state_mutex_);
    synced_changed_.notify_all();
  }
  return {};
}

Status Informer::WatchOnce() {
  stats_.watches++;
  WatchOptions watch_options;
  watch_options.resource_version = LastResourceVersion();
  watch_options.label_selector = options_.label_selector;
  watch_options.field_selector = options_.field_selector;
  watch_options.timeout_seconds = options_.watch_timeout_seconds;
  watch_options.allow_bookmarks = options_.allow_bookmarks;
  return watcher_.Watch(
      options_.type, options_.namespace_name, watch_options,
      [this](WatchEvent event) { return Apply(std::move(event)); }, stop_);
}

Status Informer::Apply(WatchEvent event) {
  stats_.events++;
  const std::string version = ResourceVersionOf(event.object);
  if (event.type == WatchEvent::Type::kBookmark) {
    if (!version.empty()) SetResourceVersion(version);
    return {};
  }
  if (options_.transform) event.object = options_.transform(std::move(event.object));
  auto object = std::make_shared<const json>(std::move(event.object));
  std::lock_guard dispatch(dispatch_mutex_);
  if (event.type == WatchEvent::Type::kDeleted) {
    ObjectPtr removed = store_.Remove(ObjectStore::KeyOf(*object));
    for (const auto& handlers : handlers_) {
      if (handlers.on_delete) handlers.on_delete(removed ? removed : object);
    }
  } else {
    ObjectPtr previous = store_.Upsert(object);
    for (const auto& handlers : handlers_) {
      if (previous && handlers.on_update) handlers.on_update(previous, object);
      if (!previous && handlers.on_add) handlers.on_add(object);
    }
  }
  if (!version.empty()) SetResourceVersion(version);
  return {};
}

void Informer::RunResync() {
  while (stop_.SleepFor(clock_, options_.resync_period)) {
    if (!synced_.load()) continue;
    std::lock_guard dispatch(dispatch_mutex_);
    for (const auto& object : store_.List()) {
      for (const auto& handlers : handlers_) {
        if (handlers.on_update) handlers.on_update(object, object);
      }
    }
  }
}

bool WaitForCacheSync(std::initializer_list<const Informer*> informers, CancellationToken& stop,
                      const Clock& clock) {
  constexpr auto kPoll = std::chrono::milliseconds(100);
  const auto all_synced = [&] {
    return std::ranges::all_of(informers,
                               [](const Informer* informer) { return informer->HasSynced(); });
  };
  while (!all_synced()) {
    if (!stop.SleepFor(clock, kPoll)) return false;
  }
  return true;
}

}  // namespace modelplane::core
