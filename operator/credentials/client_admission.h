// How many credential requests the endpoint works on at once, in all and per client address, so
// that one client (a node flooding it, or anyone sending bad tokens) cannot hold every thread
// the webhook server shares with admission, nor crowd out the other agents. A request past
// either bound is answered at once, before any TokenReview, and told to retry.
// Thread safety: Enter may run on any number of threads at once; a Ticket releases its place
// when it is destroyed, on any thread.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace modelplane::controller {

class ClientAdmission {
 public:
  enum class Verdict { kAdmitted, kBusy, kClientBusy };

  // Holds one place while it lives; a ticket with verdict other than kAdmitted holds none.
  class Ticket {
   public:
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket();
    [[nodiscard]] Verdict verdict() const { return verdict_; }

   private:
    friend class ClientAdmission;
    Ticket(ClientAdmission* owner, std::string client, Verdict verdict)
        : owner_(owner), client_(std::move(client)), verdict_(verdict) {}
    ClientAdmission* owner_;  // null when it holds no place
    std::string client_;
    Verdict verdict_;
  };

  ClientAdmission(int max_in_flight, int max_per_client)
      : max_in_flight_(max_in_flight), max_per_client_(max_per_client) {}

  // `remote_endpoint` is "address:port" as the server reports it; the port is not part of the
  // client's identity (each connection has its own).
  [[nodiscard]] Ticket Enter(std::string_view remote_endpoint);

  [[nodiscard]] static std::string ClientAddress(std::string_view remote_endpoint);

 private:
  void Leave(const std::string& client);

  const int max_in_flight_;
  const int max_per_client_;
  std::mutex mutex_;
  int in_flight_ = 0;
  std::map<std::string, int> per_client_;  // only clients with requests in flight
};

}  // namespace modelplane::controller
