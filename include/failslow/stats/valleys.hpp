// failslow/stats/valleys.hpp -- clustering of durations at the valleys of their density.
//
// Synopsis
//   A kernel's durations are often multimodal (cache hits and misses, short and long inputs,
//   a collective that waited or not). find_valleys estimates the density (kde.hpp: Gaussian KDE,
//   log space by default), takes the local minima between its peaks as candidate boundaries,
//   and keeps a candidate only when
//     depth  = 1 - f(valley) / min(peak on the left, peak on the right) >= min_depth, and
//     mass   on each side (the integral of f up to the neighbouring boundary) >= min_fraction
//            and >= min_count samples.
//   Candidates are removed weakest first (shallowest, then those bounding the lightest
//   cluster), re-evaluating peaks and masses of merged neighbours after each removal, so the
//   result does not depend on the order of the minima.
//   The boundaries come back in original units, ascending; cluster c holds the values in
//   [b_{c-1}, b_c) (b_{-1} = -inf, b_C = +inf). assign_clusters labels samples with it.
// Defaults: min_depth = 0.2, min_fraction = 0.01, min_count = 3, and kde_options' defaults
//   (log scale, rule of thumb 1.06 s n^-1/5, 1024 grid points, kernel cut at 6 h). Measured
//   (tests/test_valleys.cpp): no single lognormal (n = 5 .. 4e5, sigma = 0.01 .. 1.5) is split;
//   five equal, equally spaced modes are all found from n = 2000 on. The rule of thumb
//   oversmooths many modes (mode spacing / h = 0.67 n^(1/5) for five equal modes, whatever the
//   spacing); improved_sheather_jones finds them from n = 300 on, but at small n it undersmooths
//   enough to split a single mode now and then unless min_depth is raised to 0.3.
// Degenerate inputs: n = 1, all values equal, or a zero/denormal/round-off spread: one cluster,
//   bandwidth 0. NaN/Inf (and, in log scale, values <= 0) are skipped and counted; no usable
//   value at all throws failslow::invalid_argument.
// Complexity: O(n) for binning plus O(G log G) or O(G tau h/dx) for the density and O(k^2) in
//   the k candidate minima (k is small: the density is smooth).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/stats/kde.hpp"

namespace failslow::stats {

struct valley_options {
  kde_options kde{};
  double min_depth = 0.2;       ///< 1 - valley / lower neighbouring peak
  double min_fraction = 0.01;   ///< least mass on each side of a boundary
  std::uint64_t min_count = 3;  ///< least samples (by density mass) on each side
};

struct valley_clustering {
  std::vector<double> boundaries;  ///< original units, ascending; clusters = boundaries + 1
  density_estimate density;        ///< the density the valleys were found in

  std::size_t cluster_count() const noexcept { return boundaries.size() + 1; }
  /// Cluster of a value in original units (values at a boundary go to the upper cluster).
  std::size_t cluster_of(double x) const noexcept {
    return static_cast<std::size_t>(std::upper_bound(boundaries.begin(), boundaries.end(), x) - boundaries.begin());
  }
};

namespace detail {

FAILSLOW_FUNC std::vector<std::size_t> select_valleys(const std::vector<double>& f, double dx, std::uint64_t n,
                                                      const valley_options& opt);

}  // namespace detail

/// Valley boundaries of [first, last) (durations; see the synopsis).
template <class It>
valley_clustering find_valleys(It first, It last, const valley_options& opt = {}) {
  valley_clustering out;
  out.density = estimate_density(first, last, opt.kde);
  const density_estimate& d = out.density;
  if (d.bandwidth == 0 || d.density.empty()) return out;
  for (std::size_t i : detail::select_valleys(d.density, d.grid.step(), d.used, opt))
    out.boundaries.push_back(d.original(d.grid.at(i)));
  return out;
}
template <class Range>
valley_clustering find_valleys(const Range& r, const valley_options& opt = {}) {
  return find_valleys(std::begin(r), std::end(r), opt);
}

/// Label of each value of [first, last) under `c`; skipped values (non-finite, or <= 0 when
/// the clustering ran in log scale) get `unassigned`.
inline constexpr std::uint32_t unassigned = std::numeric_limits<std::uint32_t>::max();

template <class It>
std::vector<std::uint32_t> assign_clusters(It first, It last, const valley_clustering& c) {
  std::vector<std::uint32_t> labels;
  for (; first != last; ++first) {
    const auto x = static_cast<double>(*first);
    const bool usable = std::isfinite(x) && (c.density.scale == kde_scale::linear || x > 0);
    labels.push_back(usable ? static_cast<std::uint32_t>(c.cluster_of(x)) : unassigned);
  }
  return labels;
}
template <class Range>
std::vector<std::uint32_t> assign_clusters(const Range& r, const valley_clustering& c) {
  return assign_clusters(std::begin(r), std::end(r), c);
}

}  // namespace failslow::stats

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/impl/valleys.ipp"
#endif
