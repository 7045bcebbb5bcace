#include "operator/credentials/client_admission.h"

#include <utility>

namespace modelplane::controller {

ClientAdmission::Ticket::Ticket(Ticket&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      client_(std::move(other.client_)),
      verdict_(other.verdict_) {}

ClientAdmission::Ticket::~Ticket() {
  if (owner_ != nullptr) owner_->Leave(client_);
}

std::string ClientAdmission::ClientAddress(std::string_view remote_endpoint) {
  const std::size_t colon = remote_endpoint.rfind(':');
  return std::string(colon == std::string_view::npos ? remote_endpoint
                                                     : remote_endpoint.substr(0, colon));
}

ClientAdmission::Ticket ClientAdmission::Enter(std::string_view remote_endpoint) {
  std::string client = ClientAddress(remote_endpoint);
  const std::lock_guard lock(mutex_);
  if (in_flight_ >= max_in_flight_) return {nullptr, std::move(client), Verdict::kBusy};
  int& mine = per_client_[client];
  if (mine >= max_per_client_) {
    if (mine == 0) per_client_.erase(client);
    return {nullptr, std::move(client), Verdict::kClientBusy};
  }
  ++mine;
  ++in_flight_;
  return {this, std::move(client), Verdict::kAdmitted};
}

void ClientAdmission::Leave(const std::string& client) {
  const std::lock_guard lock(mutex_);
  --in_flight_;
  if (auto found = per_client_.find(client); found != per_client_.end() && --found->second <= 0) {
    per_client_.erase(found);
  }
}

}  // namespace modelplane::controller
