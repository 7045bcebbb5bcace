#include "node-agent/eviction/watermarks.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <sys/stat.h>

namespace modelplane::agent {
namespace {

// Low stays at least this far below a capped high, so one eviction frees a useful amount.
constexpr double kMinimumGapPercent = 5;

bool Percent(double value) {
  return std::isfinite(value) && value >= 0 && value <= 100;
}

}  // namespace

std::optional<KubeletFilesystem> ParseKubeletFilesystem(std::string_view text) {
  if (text == "auto") return KubeletFilesystem::kAuto;
  if (text == "shared") return KubeletFilesystem::kShared;
  if (text == "separate") return KubeletFilesystem::kSeparate;
  return std::nullopt;
}

core::Status ValidateWatermarkSettings(const WatermarkSettings& settings) {
  if (!Percent(settings.high_percent) || !Percent(settings.low_percent) ||
      settings.low_percent <= 0 || settings.low_percent >= settings.high_percent) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("eviction watermarks need 0 < lowPercent < highPercent <= "
                                       "100 (lowPercent {}, highPercent {})",
                                       settings.low_percent, settings.high_percent));
  }
  if (!Percent(settings.kubelet_image_gc_high_percent) ||
      !Percent(settings.kubelet_eviction_hard_available_percent) ||
      !Percent(settings.kubelet_margin_percent)) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "kubeletImageGcHighPercent, kubeletEvictionHardAvailablePercent and "
                           "kubeletMarginPercent must be percentages");
  }
  const Watermarks shared = EffectiveWatermarks(settings, true);
  if (shared.low_percent <= 0 || shared.limit_percent <= 0) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           "kubelet's thresholds less the margin leave no room for the cache");
  }
  return core::Ok();
}

Watermarks EffectiveWatermarks(const WatermarkSettings& settings, bool shared) {
  Watermarks watermarks{.high_percent = settings.high_percent,
                        .low_percent = settings.low_percent,
                        .limit_percent = 100,
                        .kubelet_shared = shared};
  if (!shared) return watermarks;
  const double eviction_used = 100 - settings.kubelet_eviction_hard_available_percent;
  const double ceiling = std::min(settings.kubelet_image_gc_high_percent, eviction_used) -
                         settings.kubelet_margin_percent;
  watermarks.high_percent = std::min(watermarks.high_percent, ceiling);
  watermarks.low_percent =
      std::min(watermarks.low_percent, watermarks.high_percent - kMinimumGapPercent);
  watermarks.limit_percent = eviction_used - settings.kubelet_margin_percent;
  return watermarks;
}

bool ResolveKubeletSharing(const WatermarkSettings& settings,
                           const std::filesystem::path& cache_root) {
  switch (settings.kubelet_filesystem) {
    case KubeletFilesystem::kShared: return true;
    case KubeletFilesystem::kSeparate: return false;
    case KubeletFilesystem::kAuto: break;
  }
  struct stat cache {};
  struct stat kubelet {};
  if (::stat(cache_root.c_str(), &cache) != 0 ||
      ::stat(settings.kubelet_root.c_str(), &kubelet) != 0) {
    return false;
  }
  return cache.st_dev == kubelet.st_dev;
}

WatermarkBytes ToBytes(const Watermarks& watermarks, std::uint64_t total) {
  auto part = [&](double percent) {
    return static_cast<std::uint64_t>(static_cast<double>(total) * percent / 100.0);
  };
  return {.high = part(watermarks.high_percent),
          .low = part(watermarks.low_percent),
          .limit = part(watermarks.limit_percent)};
}

}  // namespace modelplane::agent
