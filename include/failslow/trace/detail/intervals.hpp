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

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

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
  std::int64_t covered_before(std::int64_t t) const noexcept {
    // First interval starting at or after t: everything before it is either whole or cut at t.
    const auto it =
        std::lower_bound(iv_.begin(), iv_.end(), t, [](const time_interval& a, std::int64_t x) { return a.start < x; });
    const auto k = static_cast<std::size_t>(it - iv_.begin());
    if (k == 0) return 0;
    const auto& last = iv_[k - 1];
    return prefix_[k - 1] + (std::min(last.end, t) - last.start);
  }

  std::vector<time_interval> iv_;
  std::vector<std::int64_t> prefix_;
};

inline interval_set interval_union(std::vector<time_interval> list) {
  std::sort(list.begin(), list.end(), [](const time_interval& a, const time_interval& b) { return a.start < b.start; });
  std::vector<time_interval> out;
  for (const auto& x : list) {
    if (x.end <= x.start) continue;
    if (!out.empty() && x.start <= out.back().end)
      out.back().end = std::max(out.back().end, x.end);
    else
      out.push_back(x);
  }
  return interval_set(std::move(out));
}

inline interval_set intersect(const interval_set& a, const interval_set& b) {
  const auto &x = a.intervals(), &y = b.intervals();
  std::vector<time_interval> out;
  for (std::size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    const std::int64_t lo = std::max(x[i].start, y[j].start), hi = std::min(x[i].end, y[j].end);
    if (lo < hi) out.push_back({lo, hi});
    if (x[i].end < y[j].end)
      ++i;
    else
      ++j;
  }
  return interval_set(std::move(out));
}

/// a minus b.
inline interval_set subtract(const interval_set& a, const interval_set& b) {
  const auto &x = a.intervals(), &y = b.intervals();
  std::vector<time_interval> out;
  std::size_t j = 0;
  for (const auto& iv : x) {
    std::int64_t cur = iv.start;
    while (j < y.size() && y[j].end <= cur) ++j;
    for (std::size_t k = j; k < y.size() && y[k].start < iv.end; ++k) {
      if (y[k].start > cur) out.push_back({cur, y[k].start});
      cur = std::max(cur, y[k].end);
    }
    if (cur < iv.end) out.push_back({cur, iv.end});
  }
  return interval_set(std::move(out));
}

}  // namespace failslow::trace::detail
