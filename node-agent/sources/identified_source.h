// A remote source under the identity its budget counts against (core/api/source_identity.h):
// the revision's source name is the user's word, the identity is the bucket, origin or root
// behind it, shared by every revision that names it. Forwards everything else unchanged.
// Thread safety: as the wrapped source.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "node-agent/fetch/range_source.h"

namespace modelplane::agent {

class IdentifiedSource final : public RangeSource {
 public:
  IdentifiedSource(std::unique_ptr<RangeSource> inner, std::string identity)
      : inner_(std::move(inner)), identity_(std::move(identity)) {}

  [[nodiscard]] std::string_view tier() const override { return inner_->tier(); }
  [[nodiscard]] std::string_view name() const override { return inner_->name(); }
  [[nodiscard]] std::size_t max_concurrency() const override { return inner_->max_concurrency(); }
  [[nodiscard]] std::string_view admission_key() const override { return identity_; }
  [[nodiscard]] RangeSource& inner() const { return *inner_; }
  [[nodiscard]] core::Status ReadRange(const SourceFile& file, std::uint64_t offset,
                                       std::span<std::byte> destination,
                                       const ReadContext& context) override {
    return inner_->ReadRange(file, offset, destination, context);
  }

 private:
  std::unique_ptr<RangeSource> inner_;
  const std::string identity_;
};

}  // namespace modelplane::agent
