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
#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/bandwidth.hpp"
#include "failslow/stats/detail/fft.hpp"
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

namespace detail {

inline void check_kde_inputs(std::size_t n, const std::vector<double>* w, double h, const kde_grid& g) {
  if (n == 0) throw invalid_argument("kde: empty sample");
  if (!(h > 0) || !std::isfinite(h)) throw invalid_argument("kde: bandwidth must be positive and finite");
  if (g.points < 2 || !(g.lo < g.hi) || !std::isfinite(g.lo) || !std::isfinite(g.hi))
    throw invalid_argument("kde: grid needs at least 2 points and finite lo < hi");
  if (w) {
    if (w->size() != n) throw invalid_argument("kde: weights and values differ in length");
    double total = 0;
    for (double x : *w) {
      if (!(x >= 0) || !std::isfinite(x)) throw domain_error("kde: weights must be finite and >= 0");
      total += x;
    }
    if (!(total > 0)) throw domain_error("kde: weights sum to zero");
  }
}

inline double normal_pdf(double z) noexcept {
  constexpr double inv_sqrt_2pi = 0.398942280401432677939946059934;
  return inv_sqrt_2pi * std::exp(-0.5 * z * z);
}

}  // namespace detail

/// Exact Gaussian KDE of x (optionally weighted) with bandwidth h, at the grid points.
inline std::vector<double> kde_exact(const std::vector<double>& x, const std::vector<double>* weights, double h,
                                     const kde_grid& grid) {
  detail::check_kde_inputs(x.size(), weights, h, grid);
  double total = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (!std::isfinite(x[j])) throw domain_error("kde: sample contains NaN or infinity");
    total += weights ? (*weights)[j] : 1.0;
  }
  std::vector<double> f(grid.points, 0.0);
  for (std::size_t i = 0; i < grid.points; ++i) {
    const double g = grid.at(i);
    double s = 0;
    for (std::size_t j = 0; j < x.size(); ++j)
      s += (weights ? (*weights)[j] : 1.0) * detail::normal_pdf((g - x[j]) / h);
    f[i] = s / (total * h);
  }
  return f;
}

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
inline std::vector<double> bin_and_convolve(const double* x, std::size_t count, const double* weights, double h,
                                            const kde_grid& grid, const kde_binned_options& opt,
                                            simd_path path = best_simd_path()) {
  const std::size_t G = grid.points;
  const double dx = grid.step();
  std::vector<double> counts(G + 1, 0.0);  // one spare cell: the last point needs no branch
  const double last = static_cast<double>(G - 1), inv_dx = 1.0 / dx, lo = grid.lo;
  const bin_positions_fn positions = bin_positions_for(path, last);
  double total = 0;
  // In blocks: positions and fractions first (bin_positions), then the scattered adds.
  constexpr std::size_t block = 64;
  std::int64_t cell[block];
  double frac[block];
  for (std::size_t j0 = 0; j0 < count; j0 += block) {
    const std::size_t m = std::min(block, count - j0);
    positions(x + j0, m, lo, inv_dx, last, cell, frac);
    if (weights) {
      for (std::size_t j = 0; j < m; ++j) {
        const double w = weights[j0 + j];
        counts[static_cast<std::size_t>(cell[j])] += w * (1.0 - frac[j]);
        counts[static_cast<std::size_t>(cell[j]) + 1] += w * frac[j];
        total += w;
      }
    } else {
      for (std::size_t j = 0; j < m; ++j) {
        counts[static_cast<std::size_t>(cell[j])] += 1.0 - frac[j];
        counts[static_cast<std::size_t>(cell[j]) + 1] += frac[j];
      }
    }
  }
  if (!weights) total = static_cast<double>(count);
  counts[G - 1] += counts[G];  // a value exactly at hi lands on the last point
  const auto half = static_cast<std::size_t>(std::min(last, std::ceil(opt.tau * h / dx)));
  auto kernel_samples = [&] {
    std::vector<double> k(half + 1);
    for (std::size_t m = 0; m <= half; ++m) k[m] = normal_pdf(static_cast<double>(m) * dx / h) / (total * h);
    return k;
  };

  std::vector<double> f(G, 0.0);
  if (half <= 64) {
    const auto kernel = kernel_samples();
    // Mirrored, sym[half + d] = kernel[|d|]: each point's contributions are then one contiguous
    // multiply-add loop, which vectorises (the same products added in the same order).
    double sym[2 * 64 + 1];
    for (std::size_t m = 0; m <= half; ++m) sym[half + m] = sym[half - m] = kernel[m];
    for (std::size_t i = 0; i < G; ++i) {
      if (counts[i] == 0) continue;
      const double c = counts[i];
      const std::size_t from = i >= half ? i - half : 0, to = std::min(G - 1, i + half);
      const double* k = sym + (half + from - i);  // k[t - from] = kernel[|t - i|]
      double* out = f.data() + from;
      for (std::size_t t = 0; t <= to - from; ++t) out[t] += c * k[t];
    }
  } else {
    // Convolution through a zero-padded FFT. The kernel's transform is the Gaussian's own,
    // K_k = exp(-2 pi^2 (h k / (n dx))^2) / (total dx): the sampled kernel's differs by
    // aliasing of order exp(-2 pi^2 (h/dx)^2) (h/dx > 10 here), and the padding of at least
    // 2 tau h keeps the circular wrap-around below exp(-tau^2 / 2) of the peak, as the
    // truncation at tau h does on the direct path. One forward and one inverse transform.
    const std::size_t n = next_power_of_two(G + 2 * half + 1);
    std::vector<std::complex<double>> a(n);
    for (std::size_t i = 0; i < G; ++i) a[i] = counts[i];
    const auto w = fft_twiddles(n);
    fft(a, w, false);
    const double inv_n = 1.0 / static_cast<double>(n);  // the inverse's normalisation
    if (static_cast<double>(half) >= opt.tau * h / dx) {
      const double pi = std::acos(-1.0), t = h * inv_n / dx, c = -2 * pi * pi * t * t;
      const double scale = inv_n / (total * dx);
      for (std::size_t k = 0; k < n; ++k) {
        const double freq = static_cast<double>(std::min(k, n - k));
        a[k] *= std::exp(c * freq * freq) * scale;
      }
    } else {  // a kernel wider than the caller's grid: its truncated samples, transformed
      const auto kernel = kernel_samples();
      std::vector<std::complex<double>> b(n);
      for (std::size_t m = 0; m <= half; ++m) {
        b[m] = kernel[m] * inv_n;
        if (m) b[n - m] = b[m];
      }
      fft(b, w, false);
      for (std::size_t k = 0; k < n; ++k) a[k] *= b[k].real();  // a symmetric kernel: real spectrum
    }
    fft(a, w, true);
    for (std::size_t i = 0; i < G; ++i) f[i] = std::max(0.0, a[i].real());
  }
  return f;
}

}  // namespace detail

/// Linear binning onto the grid followed by convolution with the truncated kernel. Values
/// outside the grid are folded onto its end points (estimate_density lays the grid so none are).
inline std::vector<double> kde_binned(const std::vector<double>& x, const std::vector<double>* weights, double h,
                                      const kde_grid& grid, const kde_binned_options& opt = {}) {
  detail::check_kde_inputs(x.size(), weights, h, grid);
  const double dx = grid.step();
  if (h / dx < opt.min_cells_per_bandwidth * (1 - 1e-9))  // tolerate the grid's own rounding
    throw invalid_argument("kde: grid too coarse for the bandwidth (h/dx = " + std::to_string(h / dx) + " < " +
                           std::to_string(opt.min_cells_per_bandwidth) + "); use more points");
  for (double v : x)
    if (!std::isfinite(v)) throw domain_error("kde: sample contains NaN or infinity");
  return detail::bin_and_convolve(x.data(), x.size(), weights ? weights->data() : nullptr, h, grid, opt);
}

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

// Whether a sample's spread is resolvable at all: a zero, denormal or round-off spread is none.
inline bool has_spread(double lo, double hi, double h) noexcept {
  const double scale = std::max({std::abs(lo), std::abs(hi), std::numeric_limits<double>::min()});
  return hi > lo && h >= std::numeric_limits<double>::min() &&
         (hi - lo) > 64 * std::numeric_limits<double>::epsilon() * scale;
}

// Rules that look at the values themselves (order statistics), not only at their moments.
inline bool rule_needs_values(bandwidth_rule r) noexcept {
  return r == bandwidth_rule::robust_rule_of_thumb || r == bandwidth_rule::improved_sheather_jones;
}

// The density of n finite values x with moments m; `values` is x as a vector when the rule
// needs it (rule_needs_values), else may be empty.
inline density_estimate density_of(const double* x, std::size_t n, const array_moments& m,
                                   const std::vector<double>& values, density_estimate out, const kde_options& opt) {
  out.min = m.min;
  out.max = m.max;
  out.bandwidth = select_bandwidth(values, opt.bandwidth, m, opt.sorted_input);
  if (!has_spread(out.min, out.max, out.bandwidth)) {
    out.bandwidth = 0;
    out.grid = kde_grid{out.min, out.min, 1};
    return out;
  }
  const double pad = opt.binned.tau * out.bandwidth;
  kde_grid grid{out.min - pad, out.max + pad, std::max<std::size_t>(opt.grid_points, 2)};
  while (out.bandwidth / grid.step() < opt.binned.min_cells_per_bandwidth) {
    if (grid.points * 2 > opt.max_grid_points) {
      if (!opt.widen_bandwidth)
        throw invalid_argument("kde: the bandwidth needs more than max_grid_points = " +
                               std::to_string(opt.max_grid_points) + " grid points (spread / bandwidth too large)");
      // h = c dx with dx = (R + 2 tau h) / (P - 1): h = c R / (P - 1 - 2 tau c).
      const double c = opt.binned.min_cells_per_bandwidth, cells = static_cast<double>(grid.points - 1);
      if (!(cells > 2 * opt.binned.tau * c))
        throw invalid_argument("kde: max_grid_points is too small to widen the bandwidth into");
      out.bandwidth = std::max(out.bandwidth, c * (out.max - out.min) / (cells - 2 * opt.binned.tau * c) * (1 + 1e-12));
      const double wide_pad = opt.binned.tau * out.bandwidth;
      grid = kde_grid{out.min - wide_pad, out.max + wide_pad, grid.points};
      break;
    }
    grid.points = (grid.points - 1) * 2 + 1;
  }
  out.grid = grid;
  out.density = bin_and_convolve(x, n, nullptr, out.bandwidth, grid, opt.binned);  // x is finite
  return out;
}

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
