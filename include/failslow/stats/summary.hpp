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
#include <type_traits>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/valleys.hpp"

namespace failslow::stats {

struct cluster_summary {
  std::uint64_t count = 0;
  double sum = 0, min = 0, max = 0, mean = 0, variance = 0;
  double p50 = 0, p90 = 0, p99 = 0;
};

/// Summary of the ascending sorted values x[0..n) (n >= 1).
FAILSLOW_FUNC cluster_summary summarize_sorted(const double* x, std::size_t n);

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
  FAILSLOW_FUNC double mean() const noexcept;
  FAILSLOW_FUNC double variance() const noexcept;
};

namespace detail {
// The summary of the finite values v (any order; -0.0 already 0.0): sorts v in place.
FAILSLOW_FUNC distribution_summary summarize_values(std::vector<double>& v, const std::vector<double>& boundaries,
                                                    std::uint64_t skipped, bool sorted = false);
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
FAILSLOW_FUNC distribution_summary summarize(std::vector<double>&& values, const std::vector<double>& boundaries);

/// summarize() of finite values already in ascending order (-0.0 as 0.0), e.g. sorted by
/// detail::sort_nonnegative on another thread while the density was estimated. The same
/// summary; the vector is taken.
FAILSLOW_FUNC distribution_summary summarize_sorted(std::vector<double>&& sorted,
                                                    const std::vector<double>& boundaries);

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

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/impl/summary.ipp"
#endif
