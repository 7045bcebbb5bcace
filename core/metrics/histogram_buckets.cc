#include "core/metrics/histogram_buckets.h"

#include <cmath>

#include <fmt/format.h>

namespace modelplane::core {
namespace {

Status ValidateCount(std::size_t count) {
  if (count == 0 || count > kMaxHistogramBuckets) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("bucket count {} is outside 1..{}", count, kMaxHistogramBuckets));
  }
  return Ok();
}

}  // namespace

Status ValidateBucketBounds(const std::vector<double>& upper_bounds) {
  if (upper_bounds.size() > kMaxHistogramBuckets) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} buckets is more than the limit of {}", upper_bounds.size(),
                                 kMaxHistogramBuckets));
  }
  for (std::size_t i = 0; i < upper_bounds.size(); ++i) {
    if (!std::isfinite(upper_bounds[i])) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("bucket bound #{} is {}: bounds must be finite (the +Inf "
                                   "bucket is implicit)",
                                   i, upper_bounds[i]));
    }
    if (i > 0 && !(upper_bounds[i - 1] < upper_bounds[i])) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("bucket bounds must be strictly increasing: {} follows {}",
                                   upper_bounds[i], upper_bounds[i - 1]));
    }
  }
  return Ok();
}

Result<std::vector<double>> ExponentialBuckets(double start, double factor, std::size_t count) {
  if (auto valid = ValidateCount(count); !valid) return std::unexpected(valid.error());
  if (!(start > 0) || !(factor > 1)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("exponential buckets need start > 0 and factor > 1, got start "
                                 "{} and factor {}",
                                 start, factor));
  }
  std::vector<double> bounds;
  bounds.reserve(count);
  for (double bound = start; bounds.size() < count; bound *= factor) bounds.push_back(bound);
  if (auto valid = ValidateBucketBounds(bounds); !valid) return std::unexpected(valid.error());
  return bounds;
}

Result<std::vector<double>> LinearBuckets(double start, double width, std::size_t count) {
  if (auto valid = ValidateCount(count); !valid) return std::unexpected(valid.error());
  if (!(width > 0)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("linear buckets need width > 0, got {}", width));
  }
  std::vector<double> bounds;
  bounds.reserve(count);
  for (std::size_t i = 0; i < count; ++i) bounds.push_back(start + width * static_cast<double>(i));
  if (auto valid = ValidateBucketBounds(bounds); !valid) return std::unexpected(valid.error());
  return bounds;
}

std::vector<double> DefaultSecondsBuckets() {
  std::vector<double> bounds;
  for (double bound = 0.001; bounds.size() < 17; bound *= 2) bounds.push_back(bound);
  return bounds;
}

}  // namespace modelplane::core
