// The newest copy of each object of one type that this process knows, for controllers that
// write objects they also read from an informer. After a write, the informer delivers the new
// version a moment later (milliseconds, or seconds on a busy API server); a writer that reads
// the object again before that starts from the version before its own write, and its next
// optimistic write (resourceVersion as precondition) fails with a 409 and costs a GET and a
// retry. Here the API server's answer to each write is kept until the informer has caught up
// with it, and the newer of the two is what a writer starts from. Which is newer comes from
// comparing resourceVersions (resource_version.h); where the server's versions are not
// comparable the informer's copy is used, as before. Writers of one object in this process also
// take turns (LockWriters), so they do not race one another into conflicts either.
//
// Nothing here weakens the precondition: a copy that is stale for a reason this process cannot
// see (another client's write) still gets its 409, and the caller's retry reads afresh.
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/kube/object_store.h"

namespace modelplane::core {

class LatestObjects {
  struct Slot {
    std::mutex writers;
    ObjectPtr written;  // the newest answer to a write or read of this process; null: none
  };

 public:
  // Held while one writer reads, changes and writes an object; others of this process wait.
  class WriterTurn {
   public:
    explicit WriterTurn(std::shared_ptr<Slot> slot)
        : slot_(std::move(slot)), lock_(slot_->writers) {}

   private:
    std::shared_ptr<Slot> slot_;  // declared first: outlives the lock on its mutex
    std::unique_lock<std::mutex> lock_;
  };

  // The newer of `informer_copy` and what this process last wrote or read of the object (by
  // ObjectStore::KeyOf). Null when the informer has no copy: a deletion it saw wins over any
  // write before it. Once the informer has caught up, the kept answer is dropped.
  [[nodiscard]] ObjectPtr Newest(const ObjectPtr& informer_copy);
  // Keeps the API server's answer to a write (or a fresh read) of an object when it is newer
  // than what is kept; a version that does not compare is not kept.
  void Remember(const nlohmann::json& object);
  // What the informer delivered: drops the kept answer it has caught up with. Call it from the
  // informer's add and update handlers, so answers for objects nobody reads again go too.
  void Observe(const nlohmann::json& informer_copy);
  // The object is gone (the informer's delete handler).
  void Forget(const std::string& key);
  [[nodiscard]] WriterTurn LockWriters(const std::string& key);
  // Answers kept because the informer has not delivered them yet.
  [[nodiscard]] std::size_t RememberedCount() const;

 private:
  // The key's slot, made on first use; mutex_ must be held.
  const std::shared_ptr<Slot>& SlotLocked(const std::string& key);

  mutable std::mutex mutex_;  // guards slots_ and every Slot::written
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
};

}  // namespace modelplane::core
