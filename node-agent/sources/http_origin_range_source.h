// RangeSource for a plain HTTP(S) origin (tier "http"): a file of a revision is
// "<base URL>/<file path>", path segments percent-encoded, read with Range GETs.
//
// Errors: 404 -> kNotFound, 401 -> kUnauthenticated, 403 -> kPermissionDenied, 416 or a body
// shorter than the range -> kDataLoss, 429/503 -> kThrottled/kUnavailable (retryable), a stalled
// origin -> kDeadlineExceeded at the ReadContext's deadline.
// Thread safety: ReadRange may run on many threads at once; the rest is constant.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/http/http_client.h"
#include "node-agent/fetch/range_source.h"

namespace modelplane::agent {

struct HttpOriginRangeSourceOptions {
  std::string name;      // the source's name in the revision, e.g. "origin"
  std::string base_url;  // "https://models.example.com/llama/r1"; a trailing '/' is ignored
  std::size_t max_concurrency = 16;
  std::chrono::milliseconds read_timeout{30'000};
  // Sent with every request (e.g. an Authorization header from a Secret).
  std::vector<std::pair<std::string, std::string>> headers;
};

class HttpOriginRangeSource final : public RangeSource {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<HttpOriginRangeSource>> Create(
      std::shared_ptr<core::HttpClient> client, HttpOriginRangeSourceOptions options);

  [[nodiscard]] std::string_view tier() const override;
  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] std::size_t max_concurrency() const override { return options_.max_concurrency; }
  [[nodiscard]] core::Status ReadRange(const SourceFile& file, std::uint64_t offset,
                                       std::span<std::byte> destination,
                                       const ReadContext& context) override;

  // The URL that holds `path`.
  [[nodiscard]] std::string UrlFor(std::string_view path) const;

 private:
  HttpOriginRangeSource(std::shared_ptr<core::HttpClient> client,
                        HttpOriginRangeSourceOptions options);
  std::shared_ptr<core::HttpClient> client_;
  HttpOriginRangeSourceOptions options_;
  std::string name_;
};

}  // namespace modelplane::agent
