// The few CUDA runtime calls the loader makes, resolved with dlopen at run time so one binary
// runs on CPU-only nodes (where Load reports kUnavailable) and on GPU nodes alike.
//
// Declarations are our own minimal copies of the CUDA runtime ABI (opaque handles, int error
// codes, the cudaMemcpyKind values), not the CUDA headers: building needs no multi-GiB toolkit
// or wheel, and these signatures have been stable since CUDA 4. The library is looked up as
// libcudart.so.13, .12, .11.0 and libcudart.so, or at the path in
// MODELPLANE_CUDART_LIBRARY (used by the tests to prove the "absent" path).
//
// Thread safety: after Load, the function pointers are immutable; the CUDA calls themselves
// are thread-safe as CUDA documents.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/error/error.h"

namespace modelplane::agent {

using CudaStream = void*;
using CudaEvent = void*;

inline constexpr int kCudaSuccess = 0;
inline constexpr int kCudaErrorNotReady = 600;
inline constexpr int kCudaMemcpyHostToDevice = 1;
inline constexpr int kCudaMemcpyDeviceToHost = 2;
inline constexpr unsigned kCudaHostRegisterDefault = 0;
inline constexpr unsigned kCudaStreamNonBlocking = 1;
inline constexpr unsigned kCudaEventDisableTiming = 2;

struct CudaFunctions {
  int (*GetDeviceCount)(int*) = nullptr;
  int (*SetDevice)(int) = nullptr;
  int (*Malloc)(void**, std::size_t) = nullptr;
  int (*Free)(void*) = nullptr;
  int (*HostRegister)(void*, std::size_t, unsigned) = nullptr;
  int (*HostUnregister)(void*) = nullptr;
  int (*StreamCreateWithFlags)(CudaStream*, unsigned) = nullptr;
  int (*StreamDestroy)(CudaStream) = nullptr;
  int (*StreamSynchronize)(CudaStream) = nullptr;
  int (*MemcpyAsync)(void*, const void*, std::size_t, int, CudaStream) = nullptr;
  int (*Memcpy)(void*, const void*, std::size_t, int) = nullptr;
  int (*EventCreateWithFlags)(CudaEvent*, unsigned) = nullptr;
  int (*EventRecord)(CudaEvent, CudaStream) = nullptr;
  int (*EventQuery)(CudaEvent) = nullptr;
  int (*EventSynchronize)(CudaEvent) = nullptr;
  int (*EventDestroy)(CudaEvent) = nullptr;
  const char* (*GetErrorString)(int) = nullptr;
};

class CudaRuntime {
 public:
  // kUnavailable when no CUDA runtime library can be opened or it reports no device.
  [[nodiscard]] static core::Result<std::unique_ptr<CudaRuntime>> Load();
  ~CudaRuntime();
  CudaRuntime(const CudaRuntime&) = delete;
  CudaRuntime& operator=(const CudaRuntime&) = delete;

  [[nodiscard]] const CudaFunctions& api() const { return api_; }
  [[nodiscard]] int device_count() const { return device_count_; }
  [[nodiscard]] const std::string& library() const { return library_; }
  // kUnavailable with the runtime's message when `code` is not success.
  [[nodiscard]] core::Status Check(int code, const char* what) const;

 private:
  CudaRuntime() = default;
  void* handle_ = nullptr;
  CudaFunctions api_;
  int device_count_ = 0;
  std::string library_;
};

}  // namespace modelplane::agent
