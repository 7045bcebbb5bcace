// GPUDirect Storage through cuFile, resolved with dlopen at run time like the CUDA runtime.
//
// Minimal declarations of our own for the five calls used (driver open/close, handle
// register/deregister, cuFileRead); the structs match cufile.h of CUDA 11.4+ (CUfileError_t
// is {err, cu_err}; CUfileDescr_t is {type, union{fd, handle}, fs_ops}). Registration fails
// per file where the filesystem or driver cannot do GDS (tmpfs, overlayfs, no nvidia-fs, no
// compat mode): the loader then reads that file through the pinned host ring instead.
// Library: libcufile.so.0 / libcufile.so, or MODELPLANE_CUFILE_LIBRARY.
//
// Thread safety: cuFileRead may be called from several threads on one handle (cuFile's
// contract); CuFile itself is immutable after Load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <sys/types.h>

#include "core/error/error.h"

namespace modelplane::agent {

struct CuFileError {
  int err = 0;     // CUfileOpError; 0 is CU_FILE_SUCCESS
  int cu_err = 0;  // CUresult
};

struct CuFileDescriptor {
  int type = 1;  // CU_FILE_HANDLE_TYPE_OPAQUE_FD
  union {
    int fd;
    void* handle;
  } handle{};
  const void* fs_ops = nullptr;
};

using CuFileHandle = void*;

struct CuFileFunctions {
  CuFileError (*DriverOpen)() = nullptr;
  CuFileError (*DriverClose)() = nullptr;
  CuFileError (*HandleRegister)(CuFileHandle*, CuFileDescriptor*) = nullptr;
  void (*HandleDeregister)(CuFileHandle) = nullptr;
  ssize_t (*Read)(CuFileHandle, void*, std::size_t, off_t, off_t) = nullptr;
};

class CuFile {
 public:
  // kUnavailable when libcufile cannot be opened or its driver does not open.
  [[nodiscard]] static core::Result<std::unique_ptr<CuFile>> Load();
  ~CuFile();
  CuFile(const CuFile&) = delete;
  CuFile& operator=(const CuFile&) = delete;

  // A registered handle for an O_DIRECT fd; kUnavailable where GDS cannot serve this file.
  [[nodiscard]] core::Result<CuFileHandle> Register(int fd) const;
  void Deregister(CuFileHandle handle) const { api_.HandleDeregister(handle); }
  [[nodiscard]] const CuFileFunctions& api() const { return api_; }

 private:
  CuFile() = default;
  void* handle_ = nullptr;
  bool driver_open_ = false;
  CuFileFunctions api_;
};

}  // namespace modelplane::agent
