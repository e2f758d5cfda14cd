// failslow/stats/impl/bandwidth.ipp -- the definitions of stats/bandwidth.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/bandwidth.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/bracketed_root.hpp"
#include "failslow/stats/detail/fft.hpp"

namespace failslow::stats {

FAILSLOW_FUNC_DEF bandwidth_spec parse_bandwidth(std::string_view s) {
  for (auto r : {bandwidth_rule::rule_of_thumb, bandwidth_rule::robust_rule_of_thumb, bandwidth_rule::scott,
                 bandwidth_rule::silverman, bandwidth_rule::improved_sheather_jones})
    if (s == to_string(r)) return {r, 0};
  const std::string text(s);
  std::size_t used = 0;
  double h = 0;
  try {
    h = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || used == 0)
    throw invalid_argument("bandwidth '" + text +
                           "': expected rule_of_thumb, robust_rule_of_thumb, scott, silverman, isj or a number");
  return bandwidth_spec::fixed(h);
}

namespace detail {

// Botev et al.'s fixed-point function t - xi * gamma^[l](t), l = 7. weighted[s][k] holds
// (k+1)^(2s) * a2[k] (precomputed once per sample), i_sq[k] = (k+1)^2.
inline double isj_fixed_point(double t, double n, const std::vector<double>& i_sq,
                              const std::vector<std::vector<double>>& weighted) {
  const double pi = std::acos(-1.0);
  constexpr int l = 7;
  auto functional = [&](int s, double time) {
    const std::vector<double>& w = weighted[static_cast<std::size_t>(s)];
    double f = 0;
    for (std::size_t k = 0; k < i_sq.size(); ++k) f += w[k] * std::exp(-i_sq[k] * pi * pi * time);
    return 2 * std::pow(pi, 2 * s) * f;
  };
  double f = functional(l, t);
  for (int s = l - 1; s >= 2; --s) {
    double k0 = 1;  // (2s-1)!! / sqrt(2 pi)
    for (int j = 1; j < 2 * s; j += 2) k0 *= j;
    k0 /= std::sqrt(2 * pi);
    const double c = (1 + std::pow(0.5, s + 0.5)) / 3;
    const double time = std::pow(2 * c * k0 / n / f, 2.0 / (3.0 + 2.0 * s));
    f = functional(s, time);
  }
  return t - std::pow(2 * n * std::sqrt(pi) * f, -0.4);
}

inline double isj_bandwidth(const std::vector<double>& x, double lo, double hi) {
  constexpr std::size_t grid = std::size_t{1} << 14;
  const double range = hi - lo;
  std::vector<double> hist(grid, 0.0);
  for (double v : x) {
    auto bin = static_cast<std::size_t>((v - lo) / range * static_cast<double>(grid));
    hist[std::min(bin, grid - 1)] += 1.0;
  }
  for (double& h : hist) h /= static_cast<double>(x.size());
  const std::vector<double> coef = dct2(hist);
  std::vector<double> i_sq(grid - 1);
  std::vector<std::vector<double>> weighted(8, std::vector<double>(grid - 1));
  for (std::size_t k = 1; k < grid; ++k) {
    i_sq[k - 1] = static_cast<double>(k) * static_cast<double>(k);
    double w = (coef[k] / 2) * (coef[k] / 2);
    for (std::size_t s = 1; s < weighted.size(); ++s) {
      w *= i_sq[k - 1];
      weighted[s][k - 1] = w;  // (k^2)^s a2
    }
  }
  const double n = static_cast<double>(x.size());
  auto f = [&](double t) { return isj_fixed_point(t, n, i_sq, weighted); };
  // The smallest root in (0, 0.1]: a log-spaced scan finds the first sign change (f is not
  // monotone: for sharply multimodal data it turns negative again towards 0.1, so the end
  // points alone can miss the root), Brent's method refines it. Without a root, Botev's reference
  // code falls back to t = 0.28 n^(-2/5); so do we.
  double t_lo = 0, f_lo = f(0.0), t_hi = 0;
  bool found = false;
  for (int i = 0; i <= 88 && !found; ++i) {
    const double t = 1e-12 * std::pow(10.0, i / 8.0);  // 1e-12 .. 1e-1
    const double ft = f(t);
    if ((f_lo < 0) != (ft < 0)) {
      t_hi = t;
      found = true;
    } else {
      t_lo = t;
      f_lo = ft;
    }
  }
  if (!found) return std::sqrt(0.28 * std::pow(n, -0.4)) * range;
  const auto root = bracketed_root(f, t_lo, t_hi, 40, 200);
  const double t = (root.lo + root.hi) / 2;
  return std::sqrt(t) * range;
}

}  // namespace detail

FAILSLOW_FUNC_DEF double select_bandwidth(const std::vector<double>& x, const bandwidth_spec& spec,
                                          const array_moments& m, bool x_sorted) {
  if (spec.rule == bandwidth_rule::fixed) {
    if (!(spec.value > 0) || !std::isfinite(spec.value))
      throw invalid_argument("bandwidth: fixed value must be positive and finite");
    return spec.value;
  }
  const double n = static_cast<double>(m.count);
  if (m.count < 2 || !(m.max > m.min)) return 0.0;
  const double s = std::sqrt(m.variance);
  switch (spec.rule) {
    case bandwidth_rule::rule_of_thumb:
      return 1.06 * s * std::pow(n, -0.2);
    case bandwidth_rule::robust_rule_of_thumb: {
      const double spread =
          (x_sorted ? quantile_sorted(x.data(), x.size(), 0.75) - quantile_sorted(x.data(), x.size(), 0.25) : iqr(x)) /
          1.349;
      return 1.06 * (spread > 0 ? std::min(s, spread) : s) * std::pow(n, -0.2);
    }
    case bandwidth_rule::scott:
      return s * std::pow(n, -0.2);
    case bandwidth_rule::silverman:
      return s * std::pow(n * 0.75, -0.2);
    case bandwidth_rule::improved_sheather_jones: {
      const double range = m.max - m.min;
      return detail::isj_bandwidth(x, m.min - range / 10, m.max + range / 10);
    }
    case bandwidth_rule::fixed:
      break;
  }
  return spec.value;
}

FAILSLOW_FUNC_DEF double select_bandwidth(const std::vector<double>& x, const bandwidth_spec& spec) {
  if (spec.rule == bandwidth_rule::fixed) return select_bandwidth(x, spec, array_moments{});
  if (x.empty()) throw invalid_argument("bandwidth: empty sample");
  return select_bandwidth(x, spec, two_pass_moments(x.data(), x.size()));
}

}  // namespace failslow::stats
