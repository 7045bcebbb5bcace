#include "bench/hollow/modelled_source.h"

#include <thread>
#include <vector>

#include "core/digest/sha256.h"

namespace modelplane::bench {

std::byte ModelledByte(std::string_view path, std::uint64_t offset) {
  std::uint64_t seed = 1469598103934665603ULL;
  for (const char c : path) seed = (seed ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return static_cast<std::byte>((seed >> (8 * (offset % 8))) + offset / 8);
}

std::string ModelledDigest(std::string_view path, std::uint64_t size) {
  auto hasher = core::Sha256::Create();
  if (!hasher) return "";
  std::vector<std::byte> block(64 << 10);
  for (std::uint64_t done = 0; done < size;) {
    const std::uint64_t count = std::min<std::uint64_t>(block.size(), size - done);
    for (std::uint64_t i = 0; i < count; ++i) block[i] = ModelledByte(path, done + i);
    hasher->Update(std::span<const std::byte>(block.data(), count));
    done += count;
  }
  return core::FormatDigest(hasher->Finish());
}

core::Status ModelledSource::ReadRange(const agent::SourceFile& file, std::uint64_t offset,
                                       std::span<std::byte> destination,
                                       const agent::ReadContext& context) {
  if (offset + destination.size() > file.size) {
    return std::unexpected(core::Error(core::ErrorCode::kDataLoss, "beyond the modelled file"));
  }
  // The modelled transfer time, slept in slices so a cancel or deadline ends it.
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(
      static_cast<double>(destination.size()) /
      static_cast<double>(std::max<std::uint64_t>(bytes_per_second_, 1))));
  while (left.count() > 0) {
    if (auto stop = context.StopReason()) return std::unexpected(*stop);
    const auto slice = std::min(left, std::chrono::milliseconds(100));
    std::this_thread::sleep_for(slice);
    left -= slice;
  }
  for (std::size_t i = 0; i < destination.size(); ++i) {
    destination[i] = ModelledByte(file.path, offset + i);
  }
  return core::Ok();
}

}  // namespace modelplane::bench
