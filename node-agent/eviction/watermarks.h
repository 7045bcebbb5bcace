// Where eviction starts and stops, and how full admission may fill the cache.
//
// Eviction starts when the cache holds more than `high` percent of its capacity (used plus
// reserved bytes) and removes victims until it holds no more than `low` percent. Admission lets
// stagings fill the cache up to `limit` percent (100 unless kubelet shares the filesystem).
//
// When the cache shares kubelet's filesystem, kubelet's own thresholds decide first: image
// garbage collection starts at imageGCHighThresholdPercent (85 by default) and pod eviction at
// evictionHard nodefs.available (10% free, so 90% used). modelplane stays a margin below both:
// high is capped at min(imageGcHigh, 100 - evictionHardAvailable) - margin, low at high - gap,
// and the limit at 100 - evictionHardAvailable - margin. The same percentages then also apply
// to the whole filesystem as statvfs reports it (other users of the disk count), not only to
// what the cache holds.
//
// Thread safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::agent {

enum class KubeletFilesystem { kAuto, kShared, kSeparate };

[[nodiscard]] std::optional<KubeletFilesystem> ParseKubeletFilesystem(std::string_view text);

struct WatermarkSettings {
  double high_percent = 80;
  double low_percent = 70;
  KubeletFilesystem kubelet_filesystem = KubeletFilesystem::kAuto;
  std::string kubelet_root = "/var/lib/kubelet";  // compared with the cache root for kAuto
  double kubelet_image_gc_high_percent = 85;
  double kubelet_eviction_hard_available_percent = 10;
  double kubelet_margin_percent = 5;
};

// The percentages in force.
struct Watermarks {
  double high_percent = 80;
  double low_percent = 70;
  double limit_percent = 100;
  bool kubelet_shared = false;
};

// Checks 0 < low < high <= 100 and kubelet's figures; the message names the setting.
[[nodiscard]] core::Status ValidateWatermarkSettings(const WatermarkSettings& settings);

// The watermarks for a cache that shares kubelet's filesystem or not (ResolveKubeletSharing).
[[nodiscard]] Watermarks EffectiveWatermarks(const WatermarkSettings& settings, bool shared);

// kShared/kSeparate as configured; kAuto: the cache root and kubelet's root are on one
// filesystem (same st_dev). A kubelet root that does not exist is not shared.
[[nodiscard]] bool ResolveKubeletSharing(const WatermarkSettings& settings,
                                         const std::filesystem::path& cache_root);

// The watermarks applied to `total` bytes.
struct WatermarkBytes {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  std::uint64_t limit = 0;
};
[[nodiscard]] WatermarkBytes ToBytes(const Watermarks& watermarks, std::uint64_t total);

}  // namespace modelplane::agent
