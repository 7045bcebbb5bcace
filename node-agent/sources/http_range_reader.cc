#include "node-agent/sources/http_range_reader.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace modelplane::agent {
namespace {

using core::Error;
using core::ErrorCode;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

}  // namespace

core::Error OriginHttpError(std::string_view source_name, std::string_view path,
                            const core::Error& error) {
  const auto status = error.http_status();
  ErrorCode code = error.code();
  if (status == 404u || status == 410u) code = ErrorCode::kNotFound;
  if (status == 401u) code = ErrorCode::kUnauthenticated;
  if (status == 403u) code = ErrorCode::kPermissionDenied;
  if (status == 416u) code = ErrorCode::kDataLoss;  // the range starts past the file's end
  // The HTTP client itself retries only 429/502/503/504 within one read.
  const bool retryable =
      code != error.code() ? false : (error.retryable() || (status && *status >= 500u));
  return Error(code, fmt::format("{} {}: {}", source_name, path, error.message()), retryable)
      .WithHttpStatus(status);
}

core::Status ApplyReadContext(const ReadContext& context, milliseconds read_timeout,
                              core::ClientRequest& request) {
  if (auto stop = context.StopReason()) return std::unexpected(*stop);
  if (const auto left = context.TimeLeft()) {
    read_timeout = std::min(read_timeout, *left);
    request.connect_timeout = std::min(request.connect_timeout.value_or(*left), *left);
  }
  request.cancel = context.cancel;
  request.clock = context.clock;
  request.read_timeout = read_timeout;
  if (context.first_byte != nullptr) {
    request.on_head = [first_byte = context.first_byte] { *first_byte = steady_clock::now(); };
  }
  return core::Ok();
}

core::Status ReadHttpRange(core::HttpClient& client, core::ClientRequest request,
                           std::uint64_t offset, std::span<std::byte> destination,
                           const ReadContext& context, milliseconds read_timeout,
                           const HttpErrorMapper& map_error) {
  const StreamFetch fetch = [&client](const core::ClientRequest& one, const core::BodySink& sink,
                                      std::span<std::byte> landing) {
    return client.FetchStream(one, sink, landing);
  };
  return ReadHttpRangeWith(fetch, std::move(request), offset, destination, context, read_timeout,
                           map_error);
}

core::Status ReadHttpRangeWith(const StreamFetch& fetch, core::ClientRequest request,
                               std::uint64_t offset, std::span<std::byte> destination,
                               const ReadContext& context, milliseconds read_timeout,
                               const HttpErrorMapper& map_error) {
  if (destination.empty()) return core::Ok();
  if (auto applied = ApplyReadContext(context, read_timeout, request); !applied) return applied;
  request.range_first = offset;
  request.range_last = offset + destination.size() - 1;

  std::size_t written = 0;
  std::optional<Error> sink_error;
  const core::BodySink sink = [&](std::span<const std::byte> data) -> core::Status {
    if (data.size() > destination.size() - written) {
      sink_error = Error(
          ErrorCode::kDataLoss,
          fmt::format("{} sent more than the {} bytes asked for", request.url, destination.size()),
          false);
      return std::unexpected(*sink_error);
    }
    // Pieces read straight into `destination` (lent below) are in place already.
    if (data.data() != destination.data() + written) {
      std::memcpy(destination.data() + written, data.data(), data.size());
    }
    written += data.size();
    if (auto stop = context.StopReason(); stop && written < destination.size()) {
      sink_error = *stop;
      return std::unexpected(*stop);
    }
    return core::Ok();
  };

  auto response = fetch(request, sink, destination);
  if (!response) {
    if (sink_error) return std::unexpected(sink_error->Wrap(request.url));
    const Error& error = response.error();
    if (error.code() == ErrorCode::kDeadlineExceeded) {
      return std::unexpected(Error(ErrorCode::kDeadlineExceeded, error.message(), true));
    }
    if (written > 0 &&
        (error.code() == ErrorCode::kUnavailable || error.code() == ErrorCode::kIo)) {
      // The server promised more than it sent before the connection ended.
      return std::unexpected(
          Error(ErrorCode::kDataLoss,
                fmt::format("truncated: {} of {} bytes from offset {}: {}", written,
                            destination.size(), offset, error.message()),
                true));
    }
    return std::unexpected(map_error(error));
  }
  if (written < destination.size()) {
    return std::unexpected(
        Error(ErrorCode::kDataLoss,
              fmt::format("{} holds fewer bytes than asked: {} of {} from offset {}", request.url,
                          written, destination.size(), offset),
              false));
  }
  return core::Ok();
}

}  // namespace modelplane::agent
