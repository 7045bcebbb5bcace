// Which readers a peer server serves at once: it serves the readers it serves to completion.
// A reader (a peer node: its certificate's subject under mutual TLS, else its address) keeps its
// place while it keeps asking, that is while one of its bodies is in flight or one ended less
// than `keep` ago; a new reader is turned away (503, it reads from another peer or asks again)
// while `max_readers` hold places.
//
// Why: a holder that shared its streams among every reader that asked let none of them finish
// early, so a zone's followers held the same files at the same moments and had nothing to
// trade; served to completion, a holder's first readers become holders and serve the rest
// (bench/rollout-sim, docs/scale.md). Readers on one address (token-authenticated peers behind
// one host, loopback tests) count as one reader.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "core/clock/clock.h"

namespace modelplane::agent {

class ReaderAdmission {
 public:
  // max_readers 0: no limit. `clock` must outlive this.
  ReaderAdmission(std::size_t max_readers, std::chrono::milliseconds keep,
                  const core::Clock& clock);

  // Whether `reader` may start a body now: it holds a place, or a place is free (it takes it).
  // Each admitted body must end with Finished.
  [[nodiscard]] bool TryAdmit(std::string_view reader);
  // One of `reader`'s bodies ended; its place is kept for `keep` after its last one.
  void Finished(std::string_view reader);
  // Readers holding places now.
  [[nodiscard]] std::size_t readers() const;

 private:
  struct Place {
    int in_flight = 0;
    core::Clock::SteadyTime last_ended{};
  };
  // Frees the places of readers that stopped asking.
  void ExpireLocked(core::Clock::SteadyTime now) const;

  const std::size_t max_readers_;
  const std::chrono::milliseconds keep_;
  const core::Clock& clock_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, Place, std::less<>> places_;
};

// The reader a request comes from: "certificate:<subject>" under mutual TLS, else the address
// part of "address:port" ("[v6]:port" keeps its brackets).
[[nodiscard]] std::string ReaderOf(std::string_view remote_endpoint,
                                   const std::string* certificate_subject);

}  // namespace modelplane::agent
