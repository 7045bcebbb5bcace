// RangeSource for a shared filesystem mount (tier "sharedFilesystem": NFS, Lustre, CephFS...): a
// file of a revision is "<root>/<file path>", read with large preads.
//
// Safety: paths are opened relative to a descriptor of the confining root (the source policy's
// root that allowed this one, else the root itself) with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS), so "..", absolute paths and symlinks that lead outside it fail
// (kPermissionDenied, the message says the path escapes the root) while symlinks that stay inside
// work. Where openat2 is missing (kernels before 5.6) the path is walked one component at a time
// with O_NOFOLLOW and every symlink is refused. Only regular files are read (a FIFO would block).
//
// Direct I/O: when the destination buffer and the offset are 4096-byte aligned (the fetch engine
// guarantees both), the aligned prefix of the range is read with O_DIRECT, bypassing the page
// cache that a one-time copy would only pollute; the unaligned tail of a file's last range is
// read through a buffered descriptor. A filesystem that refuses O_DIRECT (EINVAL) switches the
// source to buffered reads for good.
// Thread safety: ReadRange may run on many threads at once; each call opens its own descriptors.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/io/unique_fd.h"
#include "node-agent/fetch/range_source.h"

namespace modelplane::agent {

struct SharedFilesystemRangeSourceOptions {
  std::string name;  // the source's name in the revision, e.g. "nfs"
  std::string root;  // the mount point (or a folder below it)
  // Opens are confined beneath this folder, `root` or one above it (the source policy's root
  // that allowed `root`); empty: `root` itself.
  std::string confine_to;
  std::size_t max_concurrency = 8;
  bool direct_io = true;
  // One pread asks for at most this much; cancellation is checked between preads.
  std::size_t read_chunk = 16 * 1024 * 1024;
  // Test hook: behave as if openat2 did not exist.
  bool force_component_walk = false;
};

class SharedFilesystemRangeSource final : public RangeSource {
 public:
  static constexpr std::size_t kDirectAlignment = 4096;

  [[nodiscard]] static core::Result<std::unique_ptr<SharedFilesystemRangeSource>> Create(
      SharedFilesystemRangeSourceOptions options);

  [[nodiscard]] std::string_view tier() const override;
  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] std::size_t max_concurrency() const override { return options_.max_concurrency; }
  [[nodiscard]] core::Status ReadRange(const SourceFile& file, std::uint64_t offset,
                                       std::span<std::byte> destination,
                                       const ReadContext& context) override;

  // Bytes read so far with O_DIRECT and through the page cache (tests and metrics).
  [[nodiscard]] std::uint64_t direct_bytes() const { return direct_bytes_.load(); }
  [[nodiscard]] std::uint64_t buffered_bytes() const { return buffered_bytes_.load(); }

  // Opens `path` below the root with the rules above; `flags` are added to O_RDONLY.
  [[nodiscard]] core::Result<core::UniqueFd> OpenBeneath(const std::string& path, int flags) const;

 private:
  SharedFilesystemRangeSource(SharedFilesystemRangeSourceOptions options, core::UniqueFd root,
                              std::string prefix);
  // `path` relative to confine_to, already checked.
  [[nodiscard]] core::Result<core::UniqueFd> OpenConfined(const std::string& path, int flags) const;
  [[nodiscard]] core::Result<core::UniqueFd> OpenByWalking(const std::string& path,
                                                           int flags) const;
  [[nodiscard]] core::Status ReadAll(int fd, const std::string& path, std::uint64_t offset,
                                     std::span<std::byte> destination,
                                     const ReadContext& context) const;

  SharedFilesystemRangeSourceOptions options_;
  core::UniqueFd root_;  // confine_to
  std::string prefix_;   // root relative to confine_to, with a trailing '/', or empty
  std::string name_;
  std::atomic<bool> direct_supported_{true};
  std::atomic<std::uint64_t> direct_bytes_{0};
  std::atomic<std::uint64_t> buffered_bytes_{0};
};

}  // namespace modelplane::agent
