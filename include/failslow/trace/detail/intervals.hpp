// failslow/trace/detail/intervals.hpp -- sets of time as sorted disjoint half-open intervals:
// union, intersection, difference and the measure inside a window.
//
// Synopsis
//   interval_set s = interval_union(list)     from any [start, end) list (end <= start: empty)
//   intersect(a, b), subtract(a, b)           of two sets, linear merges
//   s.measure(lo, hi)                         |s & [lo, hi)| in O(log n) (prefix sums)
// Complexity: union O(n log n); intersect/subtract O(|a| + |b|).
// Errors: none.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"

namespace failslow::trace::detail {

struct time_interval {
  std::int64_t start = 0, end = 0;
};

/// Sorted, disjoint, non-empty intervals; prefix_ holds the total length before each one.
class interval_set {
 public:
  interval_set() = default;
  explicit interval_set(std::vector<time_interval> disjoint) : iv_(std::move(disjoint)) {
    prefix_.resize(iv_.size() + 1, 0);
    for (std::size_t i = 0; i < iv_.size(); ++i) prefix_[i + 1] = prefix_[i] + (iv_[i].end - iv_[i].start);
  }

  const std::vector<time_interval>& intervals() const noexcept { return iv_; }
  std::int64_t total() const noexcept { return prefix_.empty() ? 0 : prefix_.back(); }

  /// Length of the set inside [lo, hi).
  std::int64_t measure(std::int64_t lo, std::int64_t hi) const noexcept {
    if (hi <= lo || iv_.empty()) return 0;
    return covered_before(hi) - covered_before(lo);
  }

 private:
  // Length of the set in (-inf, t).
  FAILSLOW_FUNC std::int64_t covered_before(std::int64_t t) const noexcept;

  std::vector<time_interval> iv_;
  std::vector<std::int64_t> prefix_;
};

FAILSLOW_FUNC interval_set interval_union(std::vector<time_interval> list);

FAILSLOW_FUNC interval_set intersect(const interval_set& a, const interval_set& b);

/// a minus b.
FAILSLOW_FUNC interval_set subtract(const interval_set& a, const interval_set& b);

}  // namespace failslow::trace::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/detail/impl/intervals.ipp"
#endif
