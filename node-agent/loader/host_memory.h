// RAII owners for the loader's memory: page-aligned anonymous host mappings (O_DIRECT needs
// aligned buffers; untouched pages cost nothing), device allocations from cudaMalloc, and
// cudaHostRegister pinning of a host range.
//
// Thread safety: move-only values; not shared between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/error/error.h"
#include "node-agent/loader/cuda_runtime.h"

namespace modelplane::agent {

class HostMapping {
 public:
  HostMapping() = default;
  [[nodiscard]] static core::Result<HostMapping> Allocate(std::uint64_t bytes);
  // A private, writable (copy-on-write) mapping of a whole file: its pages are the page
  // cache's until someone writes to them.
  [[nodiscard]] static core::Result<HostMapping> MapFile(int fd, std::uint64_t bytes);
  HostMapping(HostMapping&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  HostMapping& operator=(HostMapping&& other) noexcept;
  HostMapping(const HostMapping&) = delete;
  HostMapping& operator=(const HostMapping&) = delete;
  ~HostMapping() { Reset(); }

  [[nodiscard]] std::byte* data() const { return data_; }
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }

 private:
  void Reset();
  std::byte* data_ = nullptr;
  std::uint64_t bytes_ = 0;
};

class DeviceAllocation {
 public:
  DeviceAllocation() = default;
  [[nodiscard]] static core::Result<DeviceAllocation> Allocate(const CudaRuntime& cuda,
                                                               std::uint64_t bytes);
  DeviceAllocation(DeviceAllocation&& other) noexcept
      : cuda_(std::exchange(other.cuda_, nullptr)), data_(std::exchange(other.data_, nullptr)) {}
  DeviceAllocation& operator=(DeviceAllocation&& other) noexcept;
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  ~DeviceAllocation() { Reset(); }

  [[nodiscard]] std::byte* data() const { return data_; }

 private:
  void Reset();
  const CudaRuntime* cuda_ = nullptr;
  std::byte* data_ = nullptr;
};

class PinnedRegistration {
 public:
  PinnedRegistration() = default;
  [[nodiscard]] static core::Result<PinnedRegistration> Register(const CudaRuntime& cuda,
                                                                 std::byte* data,
                                                                 std::uint64_t bytes);
  PinnedRegistration(PinnedRegistration&& other) noexcept
      : cuda_(std::exchange(other.cuda_, nullptr)), data_(std::exchange(other.data_, nullptr)) {}
  PinnedRegistration& operator=(PinnedRegistration&& other) noexcept;
  PinnedRegistration(const PinnedRegistration&) = delete;
  PinnedRegistration& operator=(const PinnedRegistration&) = delete;
  ~PinnedRegistration() { Reset(); }

 private:
  void Reset();
  const CudaRuntime* cuda_ = nullptr;
  std::byte* data_ = nullptr;
};

}  // namespace modelplane::agent
