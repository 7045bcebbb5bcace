// One ranged GET into a caller's buffer, shared by the object-store and HTTP-origin sources:
// applies a ReadContext's deadline and cancellation to the HTTP client's request, copies the
// body into the destination and tells a short answer (kDataLoss) from a failed transfer.
//
// The context's cancel token ends the client's waits between attempts; an attempt itself has
// no cancellation hook, so cancellation and the overall deadline are also checked before the
// request and on every body chunk (at most ClientOptions::stream_buffer_size bytes apart);
// each connect and read is bounded by the time left, so a stalled server ends the call with
// kDeadlineExceeded no later than the deadline plus one client retry backoff.
// Thread safety: pure functions over the client, which is thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>

#include "core/error/error.h"
#include "core/http/http_client.h"
#include "node-agent/fetch/range_source.h"

namespace modelplane::agent {

// Turns the client's error for a request (an HTTP status error, a timeout) into the source's.
using HttpErrorMapper = std::function<core::Error(const core::Error&)>;

// The error an origin's HTTP answer means to the fetch engine, named after the source and file:
// 404/410 kNotFound, 401 kUnauthenticated, 403 kPermissionDenied and 416 kDataLoss (none
// retried), 429/503 kThrottled as the client maps them, and any other 5xx retryable: the
// origin's trouble, retried from the source's retry quota, which successes refill, so a flaky
// sole origin still completes. Shared by the HTTP-origin and hub sources.
[[nodiscard]] core::Error OriginHttpError(std::string_view source_name, std::string_view path,
                                          const core::Error& error);

// kCancelled / kDeadlineExceeded when the context already forbids starting; otherwise Ok and
// the request's connect and read timeouts are lowered to the time left before the deadline.
[[nodiscard]] core::Status ApplyReadContext(const ReadContext& context,
                                            std::chrono::milliseconds read_timeout,
                                            core::ClientRequest& request);

// One streaming request as HttpClient::FetchStream makes it; a source that follows redirects
// passes its own (redirect_follower.h).
using StreamFetch = std::function<core::Result<core::StreamResponse>(
    const core::ClientRequest&, const core::BodySink&, std::span<std::byte> landing)>;

// GETs bytes [offset, offset + destination.size()) of request.url into destination, entirely
// or not at all (see RangeSource::ReadRange for the error codes).
[[nodiscard]] core::Status ReadHttpRange(core::HttpClient& client, core::ClientRequest request,
                                         std::uint64_t offset, std::span<std::byte> destination,
                                         const ReadContext& context,
                                         std::chrono::milliseconds read_timeout,
                                         const HttpErrorMapper& map_error);

// The same through `fetch`.
[[nodiscard]] core::Status ReadHttpRangeWith(const StreamFetch& fetch, core::ClientRequest request,
                                             std::uint64_t offset, std::span<std::byte> destination,
                                             const ReadContext& context,
                                             std::chrono::milliseconds read_timeout,
                                             const HttpErrorMapper& map_error);

}  // namespace modelplane::agent
