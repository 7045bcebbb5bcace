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
    return OriginHttpError(name_, file.path, error);
  };
  return ReadHttpRange(*client_, std::move(request), offset, destination, context,
                       options_.read_timeout, map_error);
}

}  // namespace modelplane::agent
