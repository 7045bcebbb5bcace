// The hollow agents' data plane: a RangeSource that serves a modelled file's bytes at a
// modelled rate, and the content those files have. Every byte is generated from the file's path,
// so the real fetch engine verifies it against the sha256 the ModelRevision names and the real
// store publishes it, while no origin is read: the agent's control loop, informers and writes
// are real, only the network is a model.
// Thread safety: ReadRange may be called from many fetch workers at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "node-agent/fetch/range_source.h"

namespace modelplane::bench {

// Byte `offset` of the modelled file at `path`.
[[nodiscard]] std::byte ModelledByte(std::string_view path, std::uint64_t offset);
// The sha256 ("sha256:<hex>") of a modelled file of `size` bytes.
[[nodiscard]] std::string ModelledDigest(std::string_view path, std::uint64_t size);

class ModelledSource final : public agent::RangeSource {
 public:
  // `bytes_per_second`: this node's modelled read rate from the origin.
  ModelledSource(std::string name, std::uint64_t bytes_per_second)
      : name_(std::move(name)), bytes_per_second_(bytes_per_second) {}

  [[nodiscard]] std::string_view tier() const override { return "objectStore"; }
  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] std::size_t max_concurrency() const override { return 1; }
  [[nodiscard]] core::Status ReadRange(const agent::SourceFile& file, std::uint64_t offset,
                                       std::span<std::byte> destination,
                                       const agent::ReadContext& context) override;

 private:
  const std::string name_;
  const std::uint64_t bytes_per_second_;
};

}  // namespace modelplane::bench
