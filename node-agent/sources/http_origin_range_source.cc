#include "node-agent/sources/http_origin_range_source.h"

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/text/percent_encoding.h"
#include "node-agent/sources/http_range_reader.h"

namespace modelplane::agent {

using core::Error;
using core::ErrorCode;

core::Result<std::unique_ptr<HttpOriginRangeSource>> HttpOriginRangeSource::Create(
    std::shared_ptr<core::HttpClient> client, HttpOriginRangeSourceOptions options) {
  if (!client) return core::MakeError(ErrorCode::kInvalidArgument, "no HTTP client");
  while (!options.base_url.empty() && options.base_url.back() == '/') options.base_url.pop_back();
  auto url = core::Url::Parse(options.base_url);
  if (!url) return std::unexpected(url.error().Wrap("HTTP source base URL"));
  if (url->target.find('?') != std::string::npos) {
    return core::MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("HTTP source base URL {} must not have a query", options.base_url));
  }
  if (options.max_concurrency == 0) options.max_concurrency = 1;
  return std::unique_ptr<HttpOriginRangeSource>(
      new HttpOriginRangeSource(std::move(client), std::move(options)));
}

HttpOriginRangeSource::HttpOriginRangeSource(std::shared_ptr<core::HttpClient> client,
                                             HttpOriginRangeSourceOptions options)
    : client_(std::move(client)),
      options_(std::move(options)),
      name_(fmt::format("{}/{}", core::api::kTierHttp, options_.name)) {}

std::string_view HttpOriginRangeSource::tier() const {
  return core::api::kTierHttp;
}

std::string HttpOriginRangeSource::UrlFor(std::string_view path) const {
  return fmt::format("{}/{}", options_.base_url, core::PercentEncode(path, true));
}

core::Status HttpOriginRangeSource::ReadRange(const SourceFile& file, std::uint64_t offset,
                                              std::span<std::byte> destination,
                                              const ReadContext& context) {
  core::ClientRequest request;
  request.url = UrlFor(file.path);
  for (const auto& [name, value] : options_.headers) request.headers.set(name, value);
  const auto map_error = [&](const Error& error) {
    const auto status = error.http_status();
    ErrorCode code = error.code();
    if (status == 404u || status == 410u) code = ErrorCode::kNotFound;
    if (status == 401u) code = ErrorCode::kUnauthenticated;
    if (status == 403u) code = ErrorCode::kPermissionDenied;
    if (status == 416u) code = ErrorCode::kDataLoss;  // the range starts past the file's end
    // A server error (500 included) is the origin's trouble, not the request's: retried from
    // the source's retry quota, which successes refill, as the object store's InternalError
    // is, so a flaky sole origin still completes. The HTTP client itself retries only
    // 429/502/503/504 within one read.
    const bool retryable =
        code != error.code() ? false : (error.retryable() || (status && *status >= 500u));
    return Error(code, fmt::format("{} {}: {}", name_, file.path, error.message()), retryable)
        .WithHttpStatus(status);
  };
  return ReadHttpRange(*client_, std::move(request), offset, destination, context,
                       options_.read_timeout, map_error);
}

}  // namespace modelplane::agent
