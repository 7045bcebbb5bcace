// A fixed set of equally sized, 4096-byte aligned buffers that every range in flight borrows.
// The pool is the fetch engine's memory bound: staging a 1 TiB model uses the same memory as a
// 1 GiB one, and the alignment lets ranges be written with O_DIRECT straight from the buffer.
//
// Thread safety: Acquire and lease destruction may happen on any thread. Leases must not
// outlive the pool.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "core/cancel/cancellation_token.h"
#include "core/error/error.h"

namespace modelplane::agent {

class BufferPool;

class BufferLease {
 public:
  BufferLease() = default;
  BufferLease(const BufferLease&) = delete;
  BufferLease& operator=(const BufferLease&) = delete;
  BufferLease(BufferLease&& other) noexcept;
  BufferLease& operator=(BufferLease&& other) noexcept;
  ~BufferLease();

  [[nodiscard]] bool valid() const { return pool_ != nullptr; }
  [[nodiscard]] std::span<std::byte> bytes() const { return {data_, capacity_}; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  void Return();

 private:
  friend class BufferPool;
  BufferLease(BufferPool* pool, std::byte* data, std::size_t capacity)
      : pool_(pool), data_(data), capacity_(capacity) {}
  BufferPool* pool_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
};

struct BufferPoolStats {
  std::size_t buffers = 0;
  std::size_t buffer_size = 0;
  std::size_t in_use = 0;
  std::size_t high_water = 0;  // most buffers lent at once
};

class BufferPool {
 public:
  // `buffer_size` is rounded up to 4096; `count` >= 1. Memory is allocated up front, once.
  [[nodiscard]] static core::Result<std::unique_ptr<BufferPool>> Create(std::size_t buffer_size,
                                                                        std::size_t count);
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool();

  // Blocks until a buffer is free; kCancelled when `cancel` fires first.
  [[nodiscard]] core::Result<BufferLease> Acquire(core::CancellationToken& cancel);
  [[nodiscard]] std::optional<BufferLease> TryAcquire();

  [[nodiscard]] std::size_t buffer_size() const { return buffer_size_; }
  [[nodiscard]] std::size_t buffer_count() const { return storage_.size(); }
  [[nodiscard]] BufferPoolStats Stats() const;

 private:
  friend class BufferLease;
  struct FreeDeleter {
    void operator()(std::byte* memory) const;
  };
  BufferPool(std::size_t buffer_size, std::vector<std::unique_ptr<std::byte, FreeDeleter>> storage);
  void Put(std::byte* data);
  [[nodiscard]] BufferLease TakeLocked();

  const std::size_t buffer_size_;
  std::vector<std::unique_ptr<std::byte, FreeDeleter>> storage_;
  mutable std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::byte*> free_;
  std::size_t high_water_ = 0;
};

}  // namespace modelplane::agent
