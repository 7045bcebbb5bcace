// RangeSource for an S3-compatible object store (tier "objectStore"): a file of a revision is
// the object "<prefix>/<file path>" in a bucket, read with ranged GETs through S3Client.
//
// Thread safety: ReadRange may run on many threads at once (S3Client is thread-safe); the rest
// is constant after construction.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "node-agent/fetch/range_source.h"
#include "node-agent/sources/s3_client.h"

namespace modelplane::agent {

struct S3RangeSourceOptions {
  std::string name;  // the source's name in the revision, e.g. "s3"
  std::string bucket;
  std::string prefix;  // without leading or trailing '/'; may be empty
  std::size_t max_concurrency = 16;
};

class S3RangeSource final : public RangeSource {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<S3RangeSource>> Create(
      std::shared_ptr<S3Client> client, S3RangeSourceOptions options);

  [[nodiscard]] std::string_view tier() const override;
  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] std::size_t max_concurrency() const override { return options_.max_concurrency; }
  [[nodiscard]] core::Status ReadRange(const SourceFile& file, std::uint64_t offset,
                                       std::span<std::byte> destination,
                                       const ReadContext& context) override;

  // The object key that holds `path`.
  [[nodiscard]] std::string KeyFor(std::string_view path) const;

 private:
  S3RangeSource(std::shared_ptr<S3Client> client, S3RangeSourceOptions options);
  std::shared_ptr<S3Client> client_;
  S3RangeSourceOptions options_;
  std::string name_;
};

}  // namespace modelplane::agent
