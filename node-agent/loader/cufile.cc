#include "node-agent/loader/cufile.h"

#include <cstdlib>
#include <vector>

#include <dlfcn.h>
#include <fmt/format.h>

namespace modelplane::agent {

core::Result<std::unique_ptr<CuFile>> CuFile::Load() {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("MODELPLANE_CUFILE_LIBRARY"); path != nullptr) {
    candidates.emplace_back(path);
  } else {
    candidates = {"libcufile.so.0", "libcufile.so"};
  }
  auto cufile = std::unique_ptr<CuFile>(new CuFile());
  for (const std::string& candidate : candidates) {
    cufile->handle_ = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (cufile->handle_ != nullptr) break;
  }
  if (cufile->handle_ == nullptr) {
    return core::MakeError(core::ErrorCode::kUnavailable, "no cuFile library (libcufile.so.0)");
  }
  CuFileFunctions& api = cufile->api_;
  api.DriverOpen =
      reinterpret_cast<decltype(api.DriverOpen)>(::dlsym(cufile->handle_, "cuFileDriverOpen"));
  api.DriverClose =
      reinterpret_cast<decltype(api.DriverClose)>(::dlsym(cufile->handle_, "cuFileDriverClose"));
  api.HandleRegister = reinterpret_cast<decltype(api.HandleRegister)>(
      ::dlsym(cufile->handle_, "cuFileHandleRegister"));
  api.HandleDeregister = reinterpret_cast<decltype(api.HandleDeregister)>(
      ::dlsym(cufile->handle_, "cuFileHandleDeregister"));
  api.Read = reinterpret_cast<decltype(api.Read)>(::dlsym(cufile->handle_, "cuFileRead"));
  if (api.DriverOpen == nullptr || api.DriverClose == nullptr || api.HandleRegister == nullptr ||
      api.HandleDeregister == nullptr || api.Read == nullptr) {
    return core::MakeError(core::ErrorCode::kUnavailable, "libcufile lacks a cuFile symbol");
  }
  const CuFileError opened = api.DriverOpen();
  if (opened.err != 0) {
    return core::MakeError(core::ErrorCode::kUnavailable,
                           fmt::format("cuFileDriverOpen failed: error {}", opened.err));
  }
  cufile->driver_open_ = true;
  return cufile;
}

CuFile::~CuFile() {
  if (driver_open_) api_.DriverClose();
  if (handle_ != nullptr) ::dlclose(handle_);
}

core::Result<CuFileHandle> CuFile::Register(int fd) const {
  CuFileDescriptor descriptor;
  descriptor.handle.fd = fd;
  CuFileHandle handle = nullptr;
  const CuFileError error = api_.HandleRegister(&handle, &descriptor);
  if (error.err != 0) {
    return core::MakeError(core::ErrorCode::kUnavailable,
                           fmt::format("cuFileHandleRegister failed: error {}", error.err));
  }
  return handle;
}

}  // namespace modelplane::agent
