#include "node-agent/loader/load_options.h"

#include <charconv>
#include <system_error>

#include <fmt/format.h>

namespace modelplane::agent {

using core::ErrorCode;
using core::MakeError;

core::Result<LoadDevice> ParseLoadDevice(std::string_view text) {
  if (text == "cpu") return LoadDevice{.kind = DeviceKind::kCpu};
  if (text == "none") return LoadDevice{.kind = DeviceKind::kNone};
  if (text == "cuda") return LoadDevice{.kind = DeviceKind::kCuda};
  if (text.starts_with("cuda:")) {
    int index = 0;
    const std::string_view number = text.substr(5);
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), index);
    if (error == std::errc() && end == number.data() + number.size() && index >= 0) {
      return LoadDevice{.kind = DeviceKind::kCuda, .index = index};
    }
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("device '{}' is not cpu, none, cuda or cuda:N", text));
}

std::string LoadDeviceName(const LoadDevice& device) {
  switch (device.kind) {
    case DeviceKind::kCpu: return "cpu";
    case DeviceKind::kNone: return "none";
    case DeviceKind::kCuda: return fmt::format("cuda:{}", device.index);
  }
  return "unknown";
}

core::Result<IoMode> ParseIoMode(std::string_view text) {
  if (text == "auto") return IoMode::kAuto;
  if (text == "direct") return IoMode::kDirect;
  if (text == "buffered") return IoMode::kBuffered;
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("I/O mode '{}' is not auto, direct or buffered", text));
}

core::Status CheckLoadOptions(const LoadOptions& options) {
  if (options.world_size == 0 || options.rank >= options.world_size) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("rank {} is outside world size {}",
                                                              options.rank, options.world_size));
  }
  // A staged read may start anywhere in a 4 KiB block and must still fit its slot, so a slot
  // of one block holds no bytes of it: two blocks is the least that makes progress.
  if (options.request_bytes < 2 * kDirectAlignment ||
      options.request_bytes % kDirectAlignment != 0 || options.request_bytes > (1u << 30)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("request size {} is not a multiple of 4096 from 8 KiB up to 1 GiB",
                                 options.request_bytes));
  }
  if (options.queue_depth == 0 || options.queue_depth > 1024) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("queue depth {} is outside [1, 1024]", options.queue_depth));
  }
  if (options.cuda_streams == 0 || options.cuda_streams > 64) {
    return MakeError(ErrorCode::kInvalidArgument, "CUDA streams must be in [1, 64]");
  }
  return core::Ok();
}

}  // namespace modelplane::agent
