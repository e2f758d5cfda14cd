// failslow/detect/detail/sorted_window.hpp -- the last w values of a stream, kept both in
// arrival order (a ring) and sorted, so that order statistics of the window cost O(1) after an
// O(w) update (memmove of a sorted array; faster than a tree for the w <= 10^4 used here).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "failslow/stats/descriptive.hpp"

namespace failslow::detect::detail {

template <class T>
class sorted_window {
 public:
  explicit sorted_window(std::size_t capacity) : capacity_(capacity) {
    ring_.reserve(capacity);
    sorted_.reserve(capacity);
  }

  std::size_t size() const noexcept { return sorted_.size(); }
  std::size_t capacity() const noexcept { return capacity_; }
  bool full() const noexcept { return sorted_.size() == capacity_; }

  /// Appends x (finite), evicting the oldest value when full.
  void push(T x) {
    if (full()) {
      const T old = ring_[head_];
      sorted_.erase(std::lower_bound(sorted_.begin(), sorted_.end(), old));
      ring_[head_] = x;
      head_ = (head_ + 1) % capacity_;
    } else {
      ring_.push_back(x);
    }
    sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), x), x);
  }

  /// Median of the window (numpy's linear definition: the middle pair averaged); size() >= 1.
  T median() const { return stats::quantile_sorted(sorted_.data(), sorted_.size(), 0.5); }

  void clear() noexcept {
    ring_.clear();
    sorted_.clear();
    head_ = 0;
  }

 private:
  std::size_t capacity_;
  std::size_t head_ = 0;  // oldest element of ring_ once full
  std::vector<T> ring_, sorted_;
};

}  // namespace failslow::detect::detail
