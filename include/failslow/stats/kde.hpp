// failslow/stats/kde.hpp -- Gaussian kernel density estimates on an equispaced grid.
//
// Synopsis
//   f(g) = 1 / (W h) * sum_j w_j phi((g - x_j) / h),  phi the standard normal density,
//   W = sum_j w_j (w_j = 1 without weights), evaluated at the G points of a `kde_grid`.
//     kde_exact(x, w, h, grid)    the sum as written                          O(n G)
//     kde_binned(x, w, h, grid)   linear binning of x onto the grid, then convolution with the
//                                 kernel truncated at +-tau h (direct, or FFT when the kernel
//                                 spans more than 64 cells)                   O(n + G min(G, tau h / dx))
//     estimate_density(first, last, options)  durations in, density out: takes logs by default
//                                 (durations are multiplicative), skips and counts non-finite
//                                 and (in log space) non-positive values, picks the bandwidth,
//                                 lays the grid over [min - tau h, max + tau h], and evaluates.
//   The binning's position loop runs on the widest path the CPU has (AVX-512, AVX2 or the
//   build's own target, picked at run time: stats/detail/simd_path.hpp), the same bits on each.
// Accuracy of the binned path (measured in tests/test_kde.cpp against kde_exact; dx = grid
//   spacing): the largest absolute deviation, as a fraction of the peak density, follows
//   about 0.032 (dx/h)^2: 8.0e-3 at h/dx = 2, 2.0e-3 at 4, 5.0e-4 at 8, 1.3e-4 at 16, 3.2e-5
//   at 32 (3-mode lognormal data); the tests hold it to 0.05 (dx/h)^2 for several seeds.
//   Truncating the kernel at tau = 6 adds below 1e-8 of the peak. A grid coarser than
//   `min_cells_per_bandwidth` cells per h (default 2) is refused by kde_binned
//   (failslow::invalid_argument) and widened by estimate_density (more points, up to
//   max_grid_points; past it, invalid_argument, or with widen_bandwidth the smallest h that
//   grid resolves). With the defaults (1024 points over the data +- 6 h) a rule-of-thumb
//   bandwidth gives h/dx >= 2 up to a range of about 80 h.
// Errors: h <= 0 or non-finite, fewer than 2 grid points, lo >= hi, weights of another length,
//   negative or all-zero weights, non-finite values throw failslow::invalid_argument /
//   failslow::domain_error. estimate_density with no usable value throws invalid_argument.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"
#include "failslow/stats/bandwidth.hpp"
#include "failslow/stats/detail/simd_path.hpp"

namespace failslow::stats {

/// G equispaced points lo, lo + dx, ..., hi.
struct kde_grid {
  double lo = 0, hi = 1;
  std::size_t points = 1024;

  double step() const noexcept { return (hi - lo) / static_cast<double>(points - 1); }
  double at(std::size_t i) const noexcept { return i + 1 == points ? hi : lo + static_cast<double>(i) * step(); }
  std::vector<double> values() const {
    std::vector<double> v(points);
    for (std::size_t i = 0; i < points; ++i) v[i] = at(i);
    return v;
  }
};

/// Durations are clustered in log space by default; linear on request.
enum class kde_scale { log, linear };
/// Number of kde_scale values (they are 0 .. kde_scale_count - 1).
inline constexpr std::size_t kde_scale_count = 2;

/// Exact Gaussian KDE of x (optionally weighted) with bandwidth h, at the grid points.
FAILSLOW_FUNC std::vector<double> kde_exact(const std::vector<double>& x, const std::vector<double>* weights, double h,
                                            const kde_grid& grid);

struct kde_binned_options {
  double tau = 6.0;                      ///< kernel truncated at +-tau h
  double min_cells_per_bandwidth = 2.0;  ///< refuse grids with h / dx below this
};

namespace detail {

// ---- linear binning: positions on the grid, one kernel per SIMD path ----------------------
//
// pos = min(max((x_j - lo) / dx, 0), last), cell_j = floor(pos), frac_j = pos - cell_j for m
// values: a loop without stores to the counts (min/max rather than a branchy clamp), which the
// compiler vectorises. Converting doubles to 64-bit integers in vectors needs AVX-512DQ; the
// other paths convert through 32 bits (I32), exact while last < 2^31, where SSE2 and AVX2 have a
// vector instruction. Every path computes the same values, so the density is the same bits.
template <bool I32>
#if defined(__GNUC__)
__attribute__((always_inline))  // takes the instruction set of the path that calls it
#endif
inline void
bin_positions(const double* x, std::size_t m, double lo, double inv_dx, double last, std::int64_t* cell,
              double* frac) noexcept {
  for (std::size_t j = 0; j < m; ++j) {
    const double pos = std::min(std::max((x[j] - lo) * inv_dx, 0.0), last);
    if constexpr (I32)
      cell[j] = static_cast<std::int32_t>(pos);
    else
      cell[j] = static_cast<std::int64_t>(pos);
    frac[j] = pos - static_cast<double>(cell[j]);
  }
}
using bin_positions_fn = void (*)(const double*, std::size_t, double, double, double, std::int64_t*, double*);
inline void bin_positions_baseline64(const double* x, std::size_t m, double lo, double inv_dx, double last,
                                     std::int64_t* cell, double* frac) noexcept {
  bin_positions<false>(x, m, lo, inv_dx, last, cell, frac);
}
inline void bin_positions_baseline32(const double* x, std::size_t m, double lo, double inv_dx, double last,
                                     std::int64_t* cell, double* frac) noexcept {
  bin_positions<true>(x, m, lo, inv_dx, last, cell, frac);
}
#if defined(FAILSLOW_SIMD_DISPATCH)
__attribute__((target("avx2"))) inline void bin_positions_avx2(const double* x, std::size_t m, double lo, double inv_dx,
                                                               double last, std::int64_t* cell, double* frac) noexcept {
  bin_positions<true>(x, m, lo, inv_dx, last, cell, frac);
}
__attribute__((target("avx512f,avx512dq"))) inline void bin_positions_avx512(const double* x, std::size_t m, double lo,
                                                                             double inv_dx, double last,
                                                                             std::int64_t* cell,
                                                                             double* frac) noexcept {
  bin_positions<false>(x, m, lo, inv_dx, last, cell, frac);
}
#endif

// The position kernel of `path` for a grid whose last index is `last`.
inline bin_positions_fn bin_positions_for(simd_path path, double last) {
  if (!simd_path_supported(path))
    throw invalid_argument(std::string("kde: this CPU lacks the ") + to_string(path) + " path");
  const bool fits32 = last < 2147483648.0;
#if defined(FAILSLOW_SIMD_DISPATCH)
  if (path == simd_path::avx512) return bin_positions_avx512;
  if (path == simd_path::avx2 && fits32) return bin_positions_avx2;
#endif
  return fits32 ? bin_positions_baseline32 : bin_positions_baseline64;
}

// Binning and convolution of values already checked (finite, inside or folded onto the grid),
// the positions computed by the kernel of `path` (every path gives the same bits).
FAILSLOW_FUNC std::vector<double> bin_and_convolve(const double* x, std::size_t count, const double* weights, double h,
                                                   const kde_grid& grid, const kde_binned_options& opt,
                                                   simd_path path = best_simd_path());

}  // namespace detail

/// Linear binning onto the grid followed by convolution with the truncated kernel. Values
/// outside the grid are folded onto its end points (estimate_density lays the grid so none are).
FAILSLOW_FUNC std::vector<double> kde_binned(const std::vector<double>& x, const std::vector<double>* weights, double h,
                                             const kde_grid& grid, const kde_binned_options& opt = {});

struct kde_options {
  kde_scale scale = kde_scale::log;
  bandwidth_spec bandwidth{};  ///< rule or value, in the units of the (log) values
  std::size_t grid_points = 1024;
  std::size_t max_grid_points = std::size_t{1} << 20;
  /// When the bandwidth needs more than max_grid_points: false throws invalid_argument, true
  /// widens h to the smallest value the largest grid resolves (density_estimate::bandwidth
  /// reports it), for hot paths that must not fail on data (the window compressor).
  bool widen_bandwidth = false;
  /// The caller's values are ascending (e.g. already sorted for quantiles): the robust rule
  /// then reads its quartiles in place.
  bool sorted_input = false;
  kde_binned_options binned{};
};

/// A density on a grid, in the units the KDE ran in (log durations by default).
struct density_estimate {
  kde_scale scale = kde_scale::log;
  double bandwidth = 0;  ///< h, 0 when the sample has no spread
  kde_grid grid{};
  std::vector<double> density;  ///< empty when bandwidth == 0
  double min = 0, max = 0;      ///< smallest and largest used value (transformed units)
  std::uint64_t used = 0;
  std::uint64_t skipped_nonfinite = 0;
  std::uint64_t skipped_nonpositive = 0;  ///< log scale only: durations <= 0

  /// Grid point i in original units (exp in log scale).
  double original(double t) const noexcept { return scale == kde_scale::log ? std::exp(t) : t; }
};

namespace detail {
// Transformed, finite values of [first, last), with the skip counts.
template <class It>
std::vector<double> transform_values(It first, It last, kde_scale scale, density_estimate& out) {
  std::vector<double> v;
  if constexpr (std::is_base_of_v<std::random_access_iterator_tag,
                                  typename std::iterator_traits<It>::iterator_category>)
    v.reserve(static_cast<std::size_t>(last - first));
  for (; first != last; ++first) {
    const auto x = static_cast<double>(*first);
    if (!std::isfinite(x)) {
      ++out.skipped_nonfinite;
    } else if (scale == kde_scale::log) {
      if (x <= 0)
        ++out.skipped_nonpositive;
      else
        v.push_back(std::log(x));
    } else {
      v.push_back(x);
    }
  }
  out.used = v.size();
  return v;
}

// Rules that look at the values themselves (order statistics), not only at their moments.
inline bool rule_needs_values(bandwidth_rule r) noexcept {
  return r == bandwidth_rule::robust_rule_of_thumb || r == bandwidth_rule::improved_sheather_jones;
}

// The density of n finite values x with moments m; `values` is x as a vector when the rule
// needs it (rule_needs_values), else may be empty.
FAILSLOW_FUNC density_estimate density_of(const double* x, std::size_t n, const array_moments& m,
                                          const std::vector<double>& values, density_estimate out,
                                          const kde_options& opt);

inline density_estimate estimate_density_of(std::vector<double>& v, density_estimate out, const kde_options& opt) {
  if (v.empty()) throw invalid_argument("kde: no usable value (all NaN/Inf, or <= 0 in log scale)");
  const array_moments m = two_pass_moments(v.data(), v.size());  // one pass for min, max and sd
  return density_of(v.data(), v.size(), m, v, std::move(out), opt);
}

template <class It>
inline constexpr bool is_contiguous_double_iterator =
    std::is_same_v<It, const double*> || std::is_same_v<It, double*> ||
    std::is_same_v<It, std::vector<double>::const_iterator> || std::is_same_v<It, std::vector<double>::iterator>;
}  // namespace detail

/// The density of [first, last) (durations, in log space by default), see the synopsis.
template <class It>
density_estimate estimate_density(It first, It last, const kde_options& opt = {}) {
  density_estimate out;
  out.scale = opt.scale;
  if constexpr (detail::is_contiguous_double_iterator<It>) {
    // Linear scale, a moments-only rule, doubles in memory: no copy (which, for large n, costs
    // more than the estimate), unless a value is NaN or infinite (two_pass_moments refuses
    // them; the copying path below then skips and counts them).
    if (opt.scale == kde_scale::linear && !detail::rule_needs_values(opt.bandwidth.rule) && first != last) {
      const double* x = &*first;
      const auto n = static_cast<std::size_t>(last - first);
      std::optional<array_moments> m;
      try {
        m = two_pass_moments(x, n);
      } catch (const domain_error&) {
      }
      if (m) {
        out.used = n;
        return detail::density_of(x, n, *m, {}, std::move(out), opt);
      }
    }
  }
  std::vector<double> v = detail::transform_values(first, last, opt.scale, out);
  return detail::estimate_density_of(v, std::move(out), opt);
}

}  // namespace failslow::stats

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/impl/kde.ipp"
#endif
