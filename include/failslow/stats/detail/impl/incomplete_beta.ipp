// failslow/stats/detail/impl/incomplete_beta.ipp -- the definitions of stats/detail/incomplete_beta.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "failslow/stats/detail/continued_fraction.hpp"
#include "failslow/stats/detail/incomplete_beta.hpp"
#include "failslow/stats/detail/incomplete_gamma.hpp"

namespace failslow::stats::detail {

/// ln(x^a y^b / B(a, b)), y = 1 - x.
inline double beta_log_prefix(double a, double b, double x, double y) noexcept {
  if (a > b) {
    std::swap(a, b);
    std::swap(x, y);
  }
  // ln of the smaller of x, y directly, of the larger as log1p of minus the smaller: 1 - x rounds
  // by 1e-16, which b ln y would multiply by b (5e-13 at b = 5000).
  const double log_x = x <= y ? std::log(x) : std::log1p(-y);
  const double log_y = y <= x ? std::log(y) : std::log1p(-x);
  if (b < 10) return a * log_x + b * log_y - (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
  // ln Gamma(b) - ln Gamma(a + b) = -(b - 1/2) ln(1 + a/b) - a ln(a + b) + a + s(b) - s(a + b), and
  // a ln x - a ln(a + b) joined as a (ln x + ln(a + b)).
  return a * (log_x + std::log(a + b)) + b * log_y + (b - 0.5) * std::log1p(a / b) - a - stirling_correction(b) +
         stirling_correction(a + b) - std::lgamma(a);
}

/// The continued fraction of I_x(a, b) / (x^a y^b / (a B(a, b))).
inline double beta_fraction(double a, double b, double x) noexcept {
  // 1 / (1 + d_1 / (1 + d_2 / (...))), d_1 = -(a + b) x / (a + 1): the first term taken.
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double first = 1 - qab * x / qap;
  if (std::abs(first) < 1e-300) first = 1e-300;
  lentz_fraction fraction{1 / first, 1, 1 / first};
  for (int m = 1; m < 100000; ++m) {
    const double m2 = 2.0 * m;
    fraction.step(m * (b - m) * x / ((qam + m2) * (a + m2)), 1);                                            // d_2m
    if (std::abs(fraction.step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), 1) - 1) < 1e-16) break;  // d_2m+1
  }
  return fraction.f;
}

FAILSLOW_FUNC_DEF double beta_tail(double a, double b, double x, bool upper) noexcept {
  if (!(a > 0) || !(b > 0) || !(x >= 0 && x <= 1)) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return upper ? 1.0 : 0.0;
  if (x == 1) return upper ? 0.0 : 1.0;
  const double y = 1 - x;
  if (x < (a + 1) / (a + b + 2)) {
    const double lower = std::min(1.0, std::exp(beta_log_prefix(a, b, x, y)) * beta_fraction(a, b, x) / a);
    return upper ? 1 - lower : lower;
  }
  const double upper_value = std::min(1.0, std::exp(beta_log_prefix(b, a, y, x)) * beta_fraction(b, a, y) / b);
  return upper ? upper_value : 1 - upper_value;
}

}  // namespace failslow::stats::detail
