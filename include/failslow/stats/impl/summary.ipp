// failslow/stats/impl/summary.ipp -- the definitions of stats/summary.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/radix_sort.hpp"
#include "failslow/stats/summary.hpp"

namespace failslow::stats {

FAILSLOW_FUNC_DEF cluster_summary summarize_sorted(const double* x, std::size_t n) {
  if (n == 0) throw invalid_argument("summarize: empty cluster");
  const array_moments m = two_pass_moments(x, n);
  cluster_summary s;
  s.count = m.count;
  s.sum = std::accumulate(x, x + n, 0.0);
  s.min = x[0];
  s.max = x[n - 1];
  s.mean = m.mean;
  s.variance = m.variance;
  s.p50 = quantile_sorted(x, n, 0.50);
  s.p90 = quantile_sorted(x, n, 0.90);
  s.p99 = quantile_sorted(x, n, 0.99);
  return s;
}

FAILSLOW_FUNC_DEF double distribution_summary::mean() const noexcept {
  double s = 0;
  for (const auto& c : clusters) s += c.sum;
  const auto n = count();
  return n ? s / static_cast<double>(n) : std::nan("");
}

FAILSLOW_FUNC_DEF double distribution_summary::variance() const noexcept {
  const auto n = count();
  if (n < 2) return 0.0;
  const double mu = mean();
  double m2 = 0;
  for (const auto& c : clusters) {
    if (!c.count) continue;
    m2 += c.variance * static_cast<double>(c.count - 1) + static_cast<double>(c.count) * (c.mean - mu) * (c.mean - mu);
  }
  return m2 / static_cast<double>(n - 1);
}

namespace detail {

FAILSLOW_FUNC_DEF distribution_summary summarize_values(std::vector<double>& v, const std::vector<double>& boundaries,
                                                        std::uint64_t skipped, bool sorted) {
  distribution_summary out;
  out.boundaries = boundaries;
  out.skipped = skipped;
  if (v.empty()) throw invalid_argument("summarize: no finite value");
  std::vector<double> scratch;
  if (!sorted) detail::sort_nonnegative(v.data(), v.size(), scratch);  // std::sort when a value is negative
  out.overall = summarize_sorted(v.data(), v.size());
  std::size_t begin = 0;
  for (std::size_t c = 0; c <= boundaries.size(); ++c) {
    const std::size_t end =
        c < boundaries.size()
            ? static_cast<std::size_t>(std::lower_bound(v.begin(), v.end(), boundaries[c]) - v.begin())
            : v.size();
    out.clusters.push_back(end > begin ? summarize_sorted(v.data() + begin, end - begin) : cluster_summary{});
    begin = std::max(begin, end);
  }
  return out;
}

}  // namespace detail

FAILSLOW_FUNC_DEF distribution_summary summarize(std::vector<double>&& values, const std::vector<double>& boundaries) {
  if (!std::is_sorted(boundaries.begin(), boundaries.end()))
    throw invalid_argument("summarize: boundaries must be ascending");
  std::vector<double> v = std::move(values);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = v[i];
    v[kept] = x == 0 ? 0.0 : x;
    kept += std::isfinite(x) ? 1 : 0;
  }
  const std::uint64_t skipped = v.size() - kept;
  v.resize(kept);
  return detail::summarize_values(v, boundaries, skipped);
}

FAILSLOW_FUNC_DEF distribution_summary summarize_sorted(std::vector<double>&& sorted,
                                                        const std::vector<double>& boundaries) {
  if (!std::is_sorted(boundaries.begin(), boundaries.end()))
    throw invalid_argument("summarize: boundaries must be ascending");
  std::vector<double> v = std::move(sorted);
  return detail::summarize_values(v, boundaries, 0, true);
}

}  // namespace failslow::stats
