// The C ABI over LoadSafetensors: option parsing from JSON, an atomically reference-counted
// result, and DLPack export. Exceptions end here (nlohmann::json, std::bad_alloc).
#include "node-agent/loader/c_api.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json/json_document.h"
#include "node-agent/loader/loader_metrics.h"
#include "node-agent/loader/safetensors_loader.h"

#define MP_EXPORT __attribute__((visibility("default")))

namespace {

using modelplane::agent::LoadResult;

// DLPack 0.8 ABI (dlpack.h), declared here: the layout has been fixed since 0.6.
struct DLDevice {
  int32_t device_type;  // kDLCPU = 1, kDLCUDA = 2
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLComplex 5, kDLBool 6
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};

}  // namespace

struct mp_loader_metrics {
  std::unique_ptr<modelplane::agent::LoaderMetrics> metrics;
};

struct mp_loader_result {
  std::atomic<int> references{1};
  std::unique_ptr<LoadResult> result;
  std::string error;
  int32_t error_code = 0;
  // What was asked for, so that a failed load is counted under its rank and device.
  uint32_t rank = 0;
  modelplane::agent::DeviceKind device = modelplane::agent::DeviceKind::kCpu;
  std::string stats_json;
  std::vector<std::string> dtype_names;
  std::vector<std::vector<int64_t>> shapes;
};

namespace {

using modelplane::agent::DeviceKind;
using modelplane::core::Dtype;
using modelplane::core::Error;
using modelplane::core::ErrorCode;

modelplane::core::Result<modelplane::agent::LoadOptions> ParseOptions(const char* text) {
  using modelplane::core::MakeError;
  modelplane::agent::LoadOptions options;
  if (text == nullptr || *text == '\0') return options;
  // Options are a few short fields; 64 KiB refuses nonsense before it is parsed.
  auto parsed = modelplane::core::ParseJsonDocument(text, {.max_bytes = 64 << 10});
  if (!parsed) return std::unexpected(parsed.error().Wrap("options"));
  const nlohmann::json& json = *parsed;
  if (!json.is_object())
    return MakeError(ErrorCode::kInvalidArgument, "options are not a JSON object");
  for (const auto& [key, value] : json.items()) {
    if (key == "device") {
      auto device = modelplane::agent::ParseLoadDevice(value.get<std::string>());
      if (!device) return std::unexpected(device.error());
      options.device = *device;
    } else if (key == "rank") {
      options.rank = value.get<std::uint32_t>();
    } else if (key == "world_size") {
      options.world_size = value.get<std::uint32_t>();
    } else if (key == "rules") {
      auto rules = modelplane::agent::ParseShardRules(value.get<std::string>());
      if (!rules) return std::unexpected(rules.error());
      options.rules = std::move(*rules);
    } else if (key == "request_bytes") {
      options.request_bytes = value.get<std::uint32_t>();
    } else if (key == "queue_depth") {
      options.queue_depth = value.get<std::uint32_t>();
    } else if (key == "ring_bytes") {
      options.ring_bytes = value.get<std::uint64_t>();
    } else if (key == "engine") {
      const auto engine = value.get<std::string>();
      if (engine == "auto") {
        options.engine = modelplane::agent::EngineKind::kAuto;
      } else if (engine == "io_uring") {
        options.engine = modelplane::agent::EngineKind::kIoUring;
      } else if (engine == "pread") {
        options.engine = modelplane::agent::EngineKind::kThreadPool;
      } else {
        return MakeError(ErrorCode::kInvalidArgument, "engine is not auto, io_uring or pread");
      }
    } else if (key == "io") {
      auto mode = modelplane::agent::ParseIoMode(value.get<std::string>());
      if (!mode) return std::unexpected(mode.error());
      options.io_mode = *mode;
    } else if (key == "gds") {
      options.gds = value.get<bool>();
    } else if (key == "cuda_streams") {
      options.cuda_streams = value.get<std::uint32_t>();
    } else if (key == "coalesce_gap_bytes") {
      options.coalesce_gap_bytes = value.get<std::uint64_t>();
    } else {
      return MakeError(ErrorCode::kInvalidArgument, "unknown option '" + key + "'");
    }
  }
  return options;
}

DLDataType DlpackType(Dtype dtype) {
  switch (dtype) {
    case Dtype::kBool: return {6, 8, 1};
    case Dtype::kI8: return {0, 8, 1};
    case Dtype::kI16: return {0, 16, 1};
    case Dtype::kI32: return {0, 32, 1};
    case Dtype::kI64: return {0, 64, 1};
    case Dtype::kU16: return {1, 16, 1};
    case Dtype::kU32: return {1, 32, 1};
    case Dtype::kU64: return {1, 64, 1};
    case Dtype::kF16: return {2, 16, 1};
    case Dtype::kF32: return {2, 32, 1};
    case Dtype::kF64: return {2, 64, 1};
    case Dtype::kBF16: return {4, 16, 1};
    case Dtype::kC64: return {5, 64, 1};
    default: return {1, 8, 1};  // U8 and the byte-packed float formats
  }
}

struct DlpackContext {
  mp_loader_result* owner;
  std::vector<int64_t> shape;
};

void DeleteDlpack(DLManagedTensor* managed) {
  auto* context = static_cast<DlpackContext*>(managed->manager_ctx);
  mp_loader_result_release(context->owner);
  delete context;
  delete managed;
}

}  // namespace

extern "C" {

MP_EXPORT uint32_t mp_loader_abi_version(void) {
  return MP_LOADER_ABI_VERSION;
}

MP_EXPORT mp_loader_result* mp_loader_load(const char* const* paths, size_t path_count,
                                           const char* options_json) {
  auto* out = new (std::nothrow) mp_loader_result();
  if (out == nullptr) return nullptr;
  try {
    auto fail = [out](const Error& error) {
      out->error = error.ToString();
      out->error_code = 1 + static_cast<int32_t>(error.code());
      return out;
    };
    auto options = ParseOptions(options_json);
    if (!options) return fail(options.error());
    out->rank = options->rank;
    out->device = options->device.kind;
    std::vector<std::string> files;
    for (size_t i = 0; i < path_count; ++i) {
      auto resolved = modelplane::agent::ResolveCheckpointFiles(paths[i]);
      if (!resolved) return fail(resolved.error());
      files.insert(files.end(), resolved->begin(), resolved->end());
    }
    auto loaded = modelplane::agent::LoadSafetensors(files, *options);
    if (!loaded) return fail(loaded.error());
    out->result = std::make_unique<LoadResult>(std::move(*loaded));
    out->stats_json = out->result->stats().ToJson();
    for (const auto& tensor : out->result->tensors()) {
      out->dtype_names.emplace_back(modelplane::core::DtypeName(tensor.dtype));
      out->shapes.emplace_back(tensor.shape.begin(), tensor.shape.end());
    }
  } catch (const std::exception& exception) {
    out->result.reset();
    out->error = std::string("invalid_argument: ") + exception.what();
    out->error_code = 1 + static_cast<int32_t>(ErrorCode::kInvalidArgument);
  }
  return out;
}

MP_EXPORT const char* mp_loader_result_error(const mp_loader_result* result) {
  return result->error.empty() ? nullptr : result->error.c_str();
}

MP_EXPORT int32_t mp_loader_result_error_code(const mp_loader_result* result) {
  return result->error_code;
}

MP_EXPORT size_t mp_loader_result_tensor_count(const mp_loader_result* result) {
  return result->result ? result->result->tensors().size() : 0;
}

MP_EXPORT int32_t mp_loader_result_tensor(const mp_loader_result* result, size_t index,
                                          mp_loader_tensor* out) {
  if (!result->result || index >= result->result->tensors().size()) return -1;
  const auto& tensor = result->result->tensors()[index];
  const auto& device = result->result->device();
  out->name = tensor.name.c_str();
  out->dtype = result->dtype_names[index].c_str();
  out->dtype_bits = modelplane::core::DtypeBits(tensor.dtype);
  out->ndim = static_cast<int32_t>(tensor.shape.size());
  out->shape = result->shapes[index].data();
  out->data = tensor.data;
  out->nbytes = tensor.bytes;
  out->device_type = device.kind == DeviceKind::kCuda  ? MP_LOADER_DEVICE_CUDA
                     : device.kind == DeviceKind::kCpu ? MP_LOADER_DEVICE_CPU
                                                       : MP_LOADER_DEVICE_NONE;
  out->device_index = device.index;
  return 0;
}

MP_EXPORT const char* mp_loader_result_stats_json(const mp_loader_result* result) {
  return result->stats_json.c_str();
}

MP_EXPORT void* mp_loader_result_dlpack(mp_loader_result* result, size_t index) {
  if (!result->result || index >= result->result->tensors().size()) return nullptr;
  const auto& tensor = result->result->tensors()[index];
  const auto& device = result->result->device();
  if (device.kind == DeviceKind::kNone) return nullptr;
  auto* context = new (std::nothrow) DlpackContext{result, result->shapes[index]};
  auto* managed = new (std::nothrow) DLManagedTensor{};
  if (context == nullptr || managed == nullptr) {
    delete context;
    delete managed;
    return nullptr;
  }
  const DLDataType type = DlpackType(tensor.dtype);
  const uint32_t bits = modelplane::core::DtypeBits(tensor.dtype);
  // Sub-byte and F8 types travel as their bytes: the last dimension counts bytes.
  if (type.code == 1 && type.bits == 8 && bits != 8 && !context->shape.empty()) {
    const auto last = static_cast<uint64_t>(context->shape.back());
    if (last * bits % 8 == 0) {
      context->shape.back() = static_cast<int64_t>(last * bits / 8);
    } else {
      context->shape = {static_cast<int64_t>(tensor.bytes)};
    }
  }
  managed->dl_tensor.data = tensor.data;
  managed->dl_tensor.device = DLDevice{device.kind == DeviceKind::kCuda ? 2 : 1, device.index};
  managed->dl_tensor.ndim = static_cast<int32_t>(context->shape.size());
  managed->dl_tensor.dtype = type;
  managed->dl_tensor.shape = context->shape.data();
  managed->dl_tensor.strides = nullptr;
  managed->dl_tensor.byte_offset = 0;
  managed->manager_ctx = context;
  managed->deleter = DeleteDlpack;
  mp_loader_result_acquire(result);
  return managed;
}

MP_EXPORT void mp_loader_result_acquire(mp_loader_result* result) {
  result->references.fetch_add(1, std::memory_order_relaxed);
}

MP_EXPORT void mp_loader_result_release(mp_loader_result* result) {
  if (result != nullptr && result->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete result;
  }
}

MP_EXPORT mp_loader_metrics* mp_loader_metrics_create(void) {
  try {
    auto created = modelplane::agent::LoaderMetrics::Create();
    if (!created) return nullptr;  // only a bug in the fixed descriptors
    return new mp_loader_metrics{std::move(*created)};
  } catch (const std::exception&) {
    return nullptr;
  }
}

MP_EXPORT void mp_loader_metrics_destroy(mp_loader_metrics* metrics) {
  delete metrics;
}

MP_EXPORT int32_t mp_loader_metrics_record(mp_loader_metrics* metrics,
                                           const mp_loader_result* result) {
  try {
    const modelplane::core::Status status =
        result->result ? metrics->metrics->RecordLoad(result->result->stats())
                       : metrics->metrics->RecordFailure(
                             result->rank, result->device,
                             result->error_code > 0 ? static_cast<ErrorCode>(result->error_code - 1)
                                                    : ErrorCode::kInternal);
    return status ? 0 : 1 + static_cast<int32_t>(status.error().code());
  } catch (const std::exception&) {
    return 1 + static_cast<int32_t>(ErrorCode::kResourceExhausted);  // std::bad_alloc
  }
}

MP_EXPORT char* mp_loader_metrics_text(const mp_loader_metrics* metrics) {
  try {
    const std::string text = metrics->metrics->ExposeText();
    auto* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
  } catch (const std::exception&) {
    return nullptr;
  }
}

MP_EXPORT void mp_loader_free(void* pointer) {
  std::free(pointer);
}

}  // extern "C"
