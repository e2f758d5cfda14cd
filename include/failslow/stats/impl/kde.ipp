// failslow/stats/impl/kde.ipp -- the definitions of stats/kde.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/bandwidth.hpp"
#include "failslow/stats/detail/fft.hpp"
#include "failslow/stats/detail/simd_path.hpp"
#include "failslow/stats/kde.hpp"

namespace failslow::stats {

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

FAILSLOW_FUNC_DEF std::vector<double> kde_exact(const std::vector<double>& x, const std::vector<double>* weights,
                                                double h, const kde_grid& grid) {
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

namespace detail {

FAILSLOW_FUNC_DEF std::vector<double> bin_and_convolve(const double* x, std::size_t count, const double* weights,
                                                       double h, const kde_grid& grid, const kde_binned_options& opt,
                                                       simd_path path) {
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

FAILSLOW_FUNC_DEF std::vector<double> kde_binned(const std::vector<double>& x, const std::vector<double>* weights,
                                                 double h, const kde_grid& grid, const kde_binned_options& opt) {
  detail::check_kde_inputs(x.size(), weights, h, grid);
  const double dx = grid.step();
  if (h / dx < opt.min_cells_per_bandwidth * (1 - 1e-9))  // tolerate the grid's own rounding
    throw invalid_argument("kde: grid too coarse for the bandwidth (h/dx = " + std::to_string(h / dx) + " < " +
                           std::to_string(opt.min_cells_per_bandwidth) + "); use more points");
  for (double v : x)
    if (!std::isfinite(v)) throw domain_error("kde: sample contains NaN or infinity");
  return detail::bin_and_convolve(x.data(), x.size(), weights ? weights->data() : nullptr, h, grid, opt);
}

namespace detail {

// Whether a sample's spread is resolvable at all: a zero, denormal or round-off spread is none.
inline bool has_spread(double lo, double hi, double h) noexcept {
  const double scale = std::max({std::abs(lo), std::abs(hi), std::numeric_limits<double>::min()});
  return hi > lo && h >= std::numeric_limits<double>::min() &&
         (hi - lo) > 64 * std::numeric_limits<double>::epsilon() * scale;
}

FAILSLOW_FUNC_DEF density_estimate density_of(const double* x, std::size_t n, const array_moments& m,
                                              const std::vector<double>& values, density_estimate out,
                                              const kde_options& opt) {
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

}  // namespace detail

}  // namespace failslow::stats
