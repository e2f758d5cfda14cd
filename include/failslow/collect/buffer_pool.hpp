// failslow/collect/buffer_pool.hpp -- a fixed set of activity buffers allocated up front.
//
// Synopsis
//   buffer_pool pool(buffer_bytes, count)   count buffers of buffer_bytes each, one allocation,
//                                           every buffer aligned to 8 bytes (CUPTI's record
//                                           alignment) -- in fact to 64 (a cache line)
//   acquire()    a free buffer, or nullptr when all are out (counted in refused())
//   release(p)   gives a buffer back; a pointer that is not one of the pool's buffers, or one
//                that is already free, is counted (foreign_releases()) and ignored
//   owns(p)      whether p is the start of one of the pool's buffers
//   The pool is what a CUPTI request callback hands out and the completion callback returns:
//   memory never grows with run time, and an empty pool makes CUPTI drop records (which it
//   counts) instead of the process allocating more.
// Thread safety: acquire, release and the counters may be called from any threads (a mutex
//   held for a few instructions; no allocation after construction).
// Complexity: O(1) per call; O(count) memory for the free list.
// Errors: buffer_bytes < 1024, buffer_bytes not a multiple of 8 or count == 0 throws
//   failslow::invalid_argument.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"

namespace failslow::collect {

class buffer_pool {
 public:
  static constexpr std::size_t alignment = 64;

  buffer_pool(std::size_t buffer_bytes, std::size_t count) : bytes_(buffer_bytes), count_(count) {
    if (buffer_bytes < 1024 || buffer_bytes % 8 != 0)
      throw invalid_argument("buffer_pool: buffer_bytes must be a multiple of 8 and >= 1024 (got " +
                             std::to_string(buffer_bytes) + ")");
    if (count == 0) throw invalid_argument("buffer_pool: count must be >= 1");
    if (buffer_bytes > std::numeric_limits<std::size_t>::max() / count)
      throw invalid_argument("buffer_pool: buffer_bytes * count overflows");
    stride_ = (buffer_bytes + alignment - 1) / alignment * alignment;
    memory_.reset(static_cast<std::uint8_t*>(::operator new(stride_* count, std::align_val_t(alignment))));
    free_.reserve(count);
    in_pool_.assign(count, 1);
    for (std::size_t i = count; i-- > 0;) free_.push_back(memory_.get() + i * stride_);
  }
  buffer_pool(const buffer_pool&) = delete;
  buffer_pool& operator=(const buffer_pool&) = delete;

  /// A free buffer of buffer_bytes(), or nullptr when none is left.
  std::uint8_t* acquire() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    std::uint8_t* p = free_.back();
    free_.pop_back();
    in_pool_[index_of(p)] = 0;
    acquired_.fetch_add(1, std::memory_order_relaxed);
    return p;
  }

  /// Returns a buffer; false (and counted) when p is not an outstanding buffer of this pool.
  bool release(std::uint8_t* p) noexcept {
    if (!owns(p)) {
      foreign_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto& flag = in_pool_[index_of(p)];
    if (flag) {  // a double release: keep the free list free of duplicates
      foreign_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    flag = 1;
    free_.push_back(p);
    return true;
  }

  /// Whether p is the first byte of one of this pool's buffers.
  bool owns(const std::uint8_t* p) const noexcept {
    const auto base = reinterpret_cast<std::uintptr_t>(memory_.get());
    const auto x = reinterpret_cast<std::uintptr_t>(p);
    return p != nullptr && x >= base && x < base + stride_ * count_ && (x - base) % stride_ == 0;
  }

  std::size_t buffer_bytes() const noexcept { return bytes_; }
  std::size_t count() const noexcept { return count_; }
  std::size_t available() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return free_.size();
  }
  std::size_t outstanding() const { return count_ - available(); }
  /// Buffers handed out so far.
  std::uint64_t acquired() const noexcept { return acquired_.load(std::memory_order_relaxed); }
  /// acquire() calls that found the pool empty.
  std::uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }
  /// release() calls with a pointer that was not an outstanding buffer of this pool.
  std::uint64_t foreign_releases() const noexcept { return foreign_.load(std::memory_order_relaxed); }

 private:
  struct aligned_delete {
    void operator()(std::uint8_t* p) const noexcept { ::operator delete(p, std::align_val_t(alignment)); }
  };
  std::size_t index_of(const std::uint8_t* p) const noexcept {
    return static_cast<std::size_t>(p - memory_.get()) / stride_;
  }

  std::size_t bytes_, count_, stride_ = 0;
  std::unique_ptr<std::uint8_t, aligned_delete> memory_;
  std::vector<std::uint8_t*> free_;
  std::vector<std::uint8_t> in_pool_;
  mutable std::mutex mutex_;
  std::atomic<std::uint64_t> acquired_{0}, refused_{0}, foreign_{0};
};

}  // namespace failslow::collect
