#include "node-agent/loader/host_memory.h"

#include <system_error>

#include <fmt/format.h>
#include <sys/mman.h>

namespace modelplane::agent {

core::Result<HostMapping> HostMapping::Allocate(std::uint64_t bytes) {
  HostMapping mapping;
  if (bytes == 0) return mapping;
  void* data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) {
    return core::MakeError(core::ErrorCode::kResourceExhausted,
                           fmt::format("allocating {} bytes of host memory: {}", bytes,
                                       std::system_category().message(errno)));
  }
  mapping.data_ = static_cast<std::byte*>(data);
  mapping.bytes_ = bytes;
  return mapping;
}

core::Result<HostMapping> HostMapping::MapFile(int fd, std::uint64_t bytes) {
  HostMapping mapping;
  if (bytes == 0) return mapping;
  void* data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) {
    return core::MakeError(core::ErrorCode::kIo,
                           fmt::format("mapping {} bytes of a file: {}", bytes,
                                       std::system_category().message(errno)));
  }
  mapping.data_ = static_cast<std::byte*>(data);
  mapping.bytes_ = bytes;
  return mapping;
}

HostMapping& HostMapping::operator=(HostMapping&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void HostMapping::Reset() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

core::Result<DeviceAllocation> DeviceAllocation::Allocate(const CudaRuntime& cuda,
                                                          std::uint64_t bytes) {
  DeviceAllocation allocation;
  if (bytes == 0) return allocation;
  void* data = nullptr;
  if (auto status = cuda.Check(cuda.api().Malloc(&data, bytes), "cudaMalloc"); !status) {
    return std::unexpected(
        core::Error(core::ErrorCode::kResourceExhausted, status.error().message()));
  }
  allocation.cuda_ = &cuda;
  allocation.data_ = static_cast<std::byte*>(data);
  return allocation;
}

DeviceAllocation& DeviceAllocation::operator=(DeviceAllocation&& other) noexcept {
  if (this != &other) {
    Reset();
    cuda_ = std::exchange(other.cuda_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

void DeviceAllocation::Reset() {
  if (data_ != nullptr) cuda_->api().Free(data_);
  data_ = nullptr;
}

core::Result<PinnedRegistration> PinnedRegistration::Register(const CudaRuntime& cuda,
                                                              std::byte* data,
                                                              std::uint64_t bytes) {
  PinnedRegistration registration;
  if (auto status = cuda.Check(cuda.api().HostRegister(data, bytes, kCudaHostRegisterDefault),
                               "cudaHostRegister");
      !status) {
    return std::unexpected(status.error());
  }
  registration.cuda_ = &cuda;
  registration.data_ = data;
  return registration;
}

PinnedRegistration& PinnedRegistration::operator=(PinnedRegistration&& other) noexcept {
  if (this != &other) {
    Reset();
    cuda_ = std::exchange(other.cuda_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

void PinnedRegistration::Reset() {
  if (data_ != nullptr) cuda_->api().HostUnregister(data_);
  data_ = nullptr;
}

}  // namespace modelplane::agent
