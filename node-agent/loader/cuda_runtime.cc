#include "node-agent/loader/cuda_runtime.h"

#include <cstdlib>
#include <vector>

#include <dlfcn.h>
#include <fmt/format.h>

namespace modelplane::agent {
namespace {

template <typename Function>
bool Resolve(void* handle, const char* symbol, Function*& out) {
  out = reinterpret_cast<Function*>(::dlsym(handle, symbol));
  return out != nullptr;
}

}  // namespace

core::Result<std::unique_ptr<CudaRuntime>> CudaRuntime::Load() {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("MODELPLANE_CUDART_LIBRARY"); path != nullptr) {
    candidates.emplace_back(path);
  } else {
    candidates = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"};
  }
  auto runtime = std::unique_ptr<CudaRuntime>(new CudaRuntime());
  std::string tried;
  for (const std::string& candidate : candidates) {
    runtime->handle_ = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (runtime->handle_ != nullptr) {
      runtime->library_ = candidate;
      break;
    }
    const char* reason = ::dlerror();
    tried += fmt::format("{}{}: {}", tried.empty() ? "" : "; ", candidate,
                         reason == nullptr ? "not found" : reason);
  }
  if (runtime->handle_ == nullptr) {
    return core::MakeError(core::ErrorCode::kUnavailable,
                           fmt::format("no CUDA runtime: {}", tried));
  }
  void* handle = runtime->handle_;
  CudaFunctions& api = runtime->api_;
  const bool resolved = Resolve(handle, "cudaGetDeviceCount", api.GetDeviceCount) &&
                        Resolve(handle, "cudaSetDevice", api.SetDevice) &&
                        Resolve(handle, "cudaMalloc", api.Malloc) &&
                        Resolve(handle, "cudaFree", api.Free) &&
                        Resolve(handle, "cudaHostRegister", api.HostRegister) &&
                        Resolve(handle, "cudaHostUnregister", api.HostUnregister) &&
                        Resolve(handle, "cudaStreamCreateWithFlags", api.StreamCreateWithFlags) &&
                        Resolve(handle, "cudaStreamDestroy", api.StreamDestroy) &&
                        Resolve(handle, "cudaStreamSynchronize", api.StreamSynchronize) &&
                        Resolve(handle, "cudaMemcpyAsync", api.MemcpyAsync) &&
                        Resolve(handle, "cudaMemcpy", api.Memcpy) &&
                        Resolve(handle, "cudaEventCreateWithFlags", api.EventCreateWithFlags) &&
                        Resolve(handle, "cudaEventRecord", api.EventRecord) &&
                        Resolve(handle, "cudaEventQuery", api.EventQuery) &&
                        Resolve(handle, "cudaEventSynchronize", api.EventSynchronize) &&
                        Resolve(handle, "cudaEventDestroy", api.EventDestroy) &&
                        Resolve(handle, "cudaGetErrorString", api.GetErrorString);
  if (!resolved) {
    return core::MakeError(core::ErrorCode::kUnavailable,
                           fmt::format("{} lacks a CUDA runtime symbol", runtime->library_));
  }
  if (api.GetDeviceCount(&runtime->device_count_) != kCudaSuccess || runtime->device_count_ <= 0) {
    return core::MakeError(core::ErrorCode::kUnavailable,
                           fmt::format("{} reports no CUDA device", runtime->library_));
  }
  return runtime;
}

CudaRuntime::~CudaRuntime() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

core::Status CudaRuntime::Check(int code, const char* what) const {
  if (code == kCudaSuccess) return core::Ok();
  const char* text = api_.GetErrorString != nullptr ? api_.GetErrorString(code) : "unknown";
  return core::MakeError(core::ErrorCode::kUnavailable,
                         fmt::format("{}: CUDA error {} ({})", what, code, text));
}

}  // namespace modelplane::agent
