// The error type every module returns for expected failures, and the Result aliases built on it.
//
// Expected failures (bad input, unreachable peers, missing objects) travel as values in
// std::expected; exceptions are reserved for programming errors and never cross module
// boundaries. An Error says whether retrying the same operation can succeed, so callers
// (retry loops, work queues) need not interpret codes themselves.
#pragma once

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace modelplane::core {

enum class ErrorCode {
  kInvalidArgument,    // the input is malformed or violates a rule; retrying will not help
  kNotFound,           // the named object does not exist
  kAlreadyExists,      // creating something that is already there
  kConflict,           // a precondition such as a resourceVersion did not hold
  kGone,               // the requested version expired (HTTP 410)
  kPermissionDenied,   // authenticated but not allowed
  kAddressDenied,      // not connected: the name resolved only to addresses policy refuses
  kUnauthenticated,    // credentials missing or wrong
  kResourceExhausted,  // out of disk, buffer slots, quota or size limits
  kThrottled,          // the peer asked us to slow down (HTTP 429, S3 SlowDown)
  kUnavailable,        // the peer could not be reached or answered with a server error
  kDeadlineExceeded,   // an operation ran past its deadline
  kDataLoss,           // bytes do not match their digest, or a file was truncated
  kCancelled,          // the caller stopped the operation
  kIo,                 // the local operating system refused an operation
  kInternal,           // a bug or an invariant violation
};

// Stable lower-case name of a code, for logs and metrics labels.
[[nodiscard]] std::string_view ErrorCodeName(ErrorCode code);

// True for the codes that are retryable unless the producer says otherwise.
[[nodiscard]] bool IsRetryableByDefault(ErrorCode code);

class Error {
 public:
  Error(ErrorCode code, std::string message)
      : code_(code), message_(std::move(message)), retryable_(IsRetryableByDefault(code)) {}
  Error(ErrorCode code, std::string message, bool retryable)
      : code_(code), message_(std::move(message)), retryable_(retryable) {}

  [[nodiscard]] ErrorCode code() const { return code_; }
  [[nodiscard]] const std::string& message() const { return message_; }
  [[nodiscard]] bool retryable() const { return retryable_; }
  // Terminal: trying again cannot succeed until the input changes (an invalid spec). A work
  // queue retries every other error with backoff, retryable or not (a 403 from a policy, a 422,
  // a failed write can all clear), as controller-runtime does; only terminal ones are dropped.
  [[nodiscard]] bool terminal() const { return terminal_; }
  [[nodiscard]] Error MarkTerminal() const {
    Error copy = *this;
    copy.terminal_ = true;
    copy.retryable_ = false;
    return copy;
  }

  // The status of the HTTP answer the error stands for (an origin, the object store, a peer,
  // the API server), so callers branch on it without reading the message. Kept through Wrap.
  [[nodiscard]] std::optional<unsigned> http_status() const {
    if (http_status_ == 0) return std::nullopt;
    return http_status_;
  }
  [[nodiscard]] Error WithHttpStatus(std::optional<unsigned> status) const {
    Error copy = *this;
    copy.http_status_ = status.value_or(0);
    return copy;
  }

  // How long the server asked the caller to wait (an HTTP Retry-After), so a limiter can pause
  // the source that sent it. Kept through Wrap.
  [[nodiscard]] std::optional<std::chrono::milliseconds> retry_after() const {
    return retry_after_;
  }
  [[nodiscard]] Error WithRetryAfter(std::optional<std::chrono::milliseconds> wait) const {
    Error copy = *this;
    copy.retry_after_ = wait;
    return copy;
  }

  // The server's own word for what went wrong, when its answer named one in a header (a hub's
  // X-Error-Code such as RepoNotFound), so callers branch on it without reading the message.
  // Kept through Wrap; empty when none.
  [[nodiscard]] const std::string& server_reason() const { return server_reason_; }
  [[nodiscard]] Error WithServerReason(std::string reason) const {
    Error copy = *this;
    copy.server_reason_ = std::move(reason);
    return copy;
  }

  // Returns a copy whose message is prefixed with what the caller was doing,
  // e.g. Wrap("reading shard model-00001.safetensors").
  [[nodiscard]] Error Wrap(std::string_view context) const;

  // "code: message" for logs and CLI output.
  [[nodiscard]] std::string ToString() const;

  friend bool operator==(const Error&, const Error&) = default;

 private:
  ErrorCode code_;
  std::string message_;
  bool retryable_;
  bool terminal_ = false;
  unsigned http_status_ = 0;  // 0: not from an HTTP answer
  std::optional<std::chrono::milliseconds> retry_after_;
  std::string server_reason_;
};

template <typename T>
using Result = std::expected<T, Error>;

// For operations that produce nothing but can fail.
using Status = std::expected<void, Error>;

[[nodiscard]] inline std::unexpected<Error> MakeError(ErrorCode code, std::string message) {
  return std::unexpected<Error>(Error(code, std::move(message)));
}

[[nodiscard]] inline Status Ok() {
  return {};
}

}  // namespace modelplane::core
