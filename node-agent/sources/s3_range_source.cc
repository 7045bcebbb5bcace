#include "node-agent/sources/s3_range_source.h"

#include <fmt/format.h>

#include "core/api/model_revision.h"

namespace modelplane::agent {

core::Result<std::unique_ptr<S3RangeSource>> S3RangeSource::Create(std::shared_ptr<S3Client> client,
                                                                   S3RangeSourceOptions options) {
  if (!client) return core::MakeError(core::ErrorCode::kInvalidArgument, "no S3 client");
  if (options.bucket.empty()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument, "S3 source needs a bucket");
  }
  while (!options.prefix.empty() && options.prefix.front() == '/') options.prefix.erase(0, 1);
  while (!options.prefix.empty() && options.prefix.back() == '/') options.prefix.pop_back();
  if (options.max_concurrency == 0) options.max_concurrency = 1;
  return std::unique_ptr<S3RangeSource>(new S3RangeSource(std::move(client), std::move(options)));
}

S3RangeSource::S3RangeSource(std::shared_ptr<S3Client> client, S3RangeSourceOptions options)
    : client_(std::move(client)),
      options_(std::move(options)),
      name_(fmt::format("{}/{}", core::api::kTierObjectStore, options_.name)) {}

std::string_view S3RangeSource::tier() const {
  return core::api::kTierObjectStore;
}

std::string S3RangeSource::KeyFor(std::string_view path) const {
  return options_.prefix.empty() ? std::string(path) : fmt::format("{}/{}", options_.prefix, path);
}

core::Status S3RangeSource::ReadRange(const SourceFile& file, std::uint64_t offset,
                                      std::span<std::byte> destination,
                                      const ReadContext& context) {
  return client_->GetObjectRange(options_.bucket, KeyFor(file.path), offset, destination, context);
}

}  // namespace modelplane::agent
