#include "node-agent/csi/grpc_status.h"

namespace modelplane::agent {

grpc::Status ToGrpcStatus(const core::Error& error) {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (error.code()) {
    case core::ErrorCode::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case core::ErrorCode::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case core::ErrorCode::kAlreadyExists: code = grpc::StatusCode::ALREADY_EXISTS; break;
    case core::ErrorCode::kConflict: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    case core::ErrorCode::kPermissionDenied:
    case core::ErrorCode::kAddressDenied: code = grpc::StatusCode::PERMISSION_DENIED; break;
    case core::ErrorCode::kUnauthenticated: code = grpc::StatusCode::UNAUTHENTICATED; break;
    case core::ErrorCode::kResourceExhausted: code = grpc::StatusCode::RESOURCE_EXHAUSTED; break;
    case core::ErrorCode::kThrottled:
    case core::ErrorCode::kUnavailable: code = grpc::StatusCode::UNAVAILABLE; break;
    case core::ErrorCode::kDeadlineExceeded: code = grpc::StatusCode::DEADLINE_EXCEEDED; break;
    case core::ErrorCode::kCancelled: code = grpc::StatusCode::CANCELLED; break;
    case core::ErrorCode::kGone:
    case core::ErrorCode::kDataLoss:
    case core::ErrorCode::kIo:
    case core::ErrorCode::kInternal: code = grpc::StatusCode::INTERNAL; break;
  }
  return {code, error.message()};
}

}  // namespace modelplane::agent
