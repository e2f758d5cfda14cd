// failslow/stats/summary.hpp -- per-cluster summaries of a duration distribution.
//
// Synopsis
//   cluster_summary: count, sum, min, max, mean, variance (ddof = 1; 0 for one value), and the
//   p50, p90, p99 quantiles (numpy's linear definition) of one cluster of values.
//   distribution_summary: the clusters of one distribution (boundaries from valleys.hpp) plus
//   the skip counts; whole-distribution count, sum, min, max, mean and variance are derived
//   exactly from the clusters (pooled moments), and `overall` holds the exact whole-sample
//   summary including its quantiles when it was computed from data.
//     summarize(first, last, boundaries)   values split at the boundaries, then summarised
//     summarize(std::move(vector), boundaries)  the same, sorting the vector it takes in place
//     summarize_sorted(std::move(vector), boundaries)  the same of finite values already sorted
//     summarize_clusters(first, last, opt) find_valleys + summarize in one call
//   The summary is what the window compressor keeps per kernel; lognormal.hpp rebuilds a CDF
//   from it.
// Complexity: one sort: O(n) for non-negative values (durations: a radix sort,
//   stats/detail/radix_sort.hpp), else O(n log n). Memory: two copies of the values (one
//   when summarize takes them, std::vector&&).
// Accuracy: exact (order statistics and pooled moments).
// Errors: no usable value throws failslow::invalid_argument; NaN/Inf (and values <= 0 in
//   log-scale clustering) are skipped and counted.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <type_traits>
#include <vector>

#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/radix_sort.hpp"
#include "failslow/stats/valleys.hpp"

namespace failslow::stats {

struct cluster_summary {
  std::uint64_t count = 0;
  double sum = 0, min = 0, max = 0, mean = 0, variance = 0;
  double p50 = 0, p90 = 0, p99 = 0;
};

/// Summary of the ascending sorted values x[0..n) (n >= 1).
inline cluster_summary summarize_sorted(const double* x, std::size_t n) {
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

struct distribution_summary {
  std::vector<double> boundaries;         ///< ascending, original units
  std::vector<cluster_summary> clusters;  ///< boundaries.size() + 1 entries; empty clusters have count 0
  cluster_summary overall{};              ///< exact whole-sample summary
  std::uint64_t skipped = 0;              ///< values not summarised (NaN/Inf, or <= 0 in log clustering)

  std::uint64_t count() const noexcept {
    std::uint64_t n = 0;
    for (const auto& c : clusters) n += c.count;
    return n;
  }
  /// Pooled mean and variance (ddof = 1) of the clusters: exact for the union.
  double mean() const noexcept {
    double s = 0;
    for (const auto& c : clusters) s += c.sum;
    const auto n = count();
    return n ? s / static_cast<double>(n) : std::nan("");
  }
  double variance() const noexcept {
    const auto n = count();
    if (n < 2) return 0.0;
    const double mu = mean();
    double m2 = 0;
    for (const auto& c : clusters) {
      if (!c.count) continue;
      m2 +=
          c.variance * static_cast<double>(c.count - 1) + static_cast<double>(c.count) * (c.mean - mu) * (c.mean - mu);
    }
    return m2 / static_cast<double>(n - 1);
  }
};

namespace detail {
// The summary of the finite values v (any order; -0.0 already 0.0): sorts v in place.
inline distribution_summary summarize_values(std::vector<double>& v, const std::vector<double>& boundaries,
                                             std::uint64_t skipped, bool sorted = false) {
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

/// Splits the finite values of [first, last) at `boundaries` and summarises each cluster.
template <class It>
distribution_summary summarize(It first, It last, const std::vector<double>& boundaries) {
  if (!std::is_sorted(boundaries.begin(), boundaries.end()))
    throw invalid_argument("summarize: boundaries must be ascending");
  std::vector<double> v;
  if constexpr (std::is_base_of_v<std::random_access_iterator_tag,
                                  typename std::iterator_traits<It>::iterator_category>)
    v.reserve(static_cast<std::size_t>(last - first));  // one allocation, not log2(n) regrowths
  std::uint64_t skipped = 0;
  for (; first != last; ++first) {
    const auto x = static_cast<double>(*first);
    if (std::isfinite(x))
      v.push_back(x == 0 ? 0.0 : x);  // -0.0 as 0.0: the radix sort orders by bits
    else
      ++skipped;
  }
  return detail::summarize_values(v, boundaries, skipped);
}

/// summarize() of the values of `values`, which it takes: no copy of a large data set (the
/// non-finite values are dropped and the rest sorted in place). The same summary.
inline distribution_summary summarize(std::vector<double>&& values, const std::vector<double>& boundaries) {
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

/// summarize() of finite values already in ascending order (-0.0 as 0.0), e.g. sorted by
/// detail::sort_nonnegative on another thread while the density was estimated. The same
/// summary; the vector is taken.
inline distribution_summary summarize_sorted(std::vector<double>&& sorted, const std::vector<double>& boundaries) {
  if (!std::is_sorted(boundaries.begin(), boundaries.end()))
    throw invalid_argument("summarize: boundaries must be ascending");
  std::vector<double> v = std::move(sorted);
  return detail::summarize_values(v, boundaries, 0, true);
}

/// find_valleys, then summarize the usable values at its boundaries.
template <class It>
distribution_summary summarize_clusters(It first, It last, const valley_options& opt = {}) {
  const valley_clustering c = find_valleys(first, last, opt);
  if (opt.kde.scale == kde_scale::linear) return summarize(first, last, c.boundaries);
  std::vector<double> positive;
  std::uint64_t skipped = 0;
  for (auto it = first; it != last; ++it) {
    const auto x = static_cast<double>(*it);
    if (std::isfinite(x) && x > 0)
      positive.push_back(x);
    else
      ++skipped;
  }
  distribution_summary s = summarize(positive.begin(), positive.end(), c.boundaries);
  s.skipped = skipped;
  return s;
}
template <class Range>
distribution_summary summarize_clusters(const Range& r, const valley_options& opt = {}) {
  return summarize_clusters(std::begin(r), std::end(r), opt);
}

}  // namespace failslow::stats
