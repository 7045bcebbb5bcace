// core::Error -> grpc::Status for the CSI services, one mapping for every call so that kubelet
// sees the codes the CSI spec asks for (volume_publisher.h lists what each code means here).
// Thread safety: pure function.
#pragma once

#include <grpcpp/support/status.h>

#include "core/error/error.h"

namespace modelplane::agent {

// kConflict becomes FAILED_PRECONDITION: in this plugin it always means "the state of the world
// does not allow this now" (a revision not Ready here, revoked, or a volume published elsewhere).
[[nodiscard]] grpc::Status ToGrpcStatus(const core::Error& error);

}  // namespace modelplane::agent
