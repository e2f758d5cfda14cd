// failslow/trace/detail/impl/intervals.ipp -- the definitions of trace/detail/intervals.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "failslow/trace/detail/intervals.hpp"

namespace failslow::trace::detail {
FAILSLOW_FUNC_DEF std::int64_t interval_set::covered_before(std::int64_t t) const noexcept {
  // First interval starting at or after t: everything before it is either whole or cut at t.
  const auto it =
      std::lower_bound(iv_.begin(), iv_.end(), t, [](const time_interval& a, std::int64_t x) { return a.start < x; });
  const auto k = static_cast<std::size_t>(it - iv_.begin());
  if (k == 0) return 0;
  const auto& last = iv_[k - 1];
  return prefix_[k - 1] + (std::min(last.end, t) - last.start);
}

FAILSLOW_FUNC_DEF interval_set interval_union(std::vector<time_interval> list) {
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

FAILSLOW_FUNC_DEF interval_set intersect(const interval_set& a, const interval_set& b) {
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

FAILSLOW_FUNC_DEF interval_set subtract(const interval_set& a, const interval_set& b) {
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