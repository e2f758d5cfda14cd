// failslow/stats/detail/continued_fraction.hpp -- one step of a continued fraction by the
// modified Lentz method (Thompson & Barnett 1986), for the incomplete gamma and beta functions.
//
//   f = b0 + a1 / (b1 + a2 / (b2 + ...)) is evaluated front to back: each step(a_j, b_j)
//   multiplies f by C_j D_j, with C_j = b_j + a_j / C_{j-1} and D_j = 1 / (b_j + a_j D_{j-1});
//   a denominator that vanishes is replaced by 1e-300 (the method's guard). Stop when the factor
//   returned is within eps of 1.
#pragma once

#include <cmath>

namespace failslow::stats::detail {

struct lentz_fraction {
  double f, c, d;  ///< the value so far and Lentz's C and D

  /// Folds in the term a / (b + ...); returns the factor f was multiplied by.
  double step(double a, double b) noexcept {
    constexpr double tiny = 1e-300;
    d = b + a * d;
    if (std::abs(d) < tiny) d = tiny;
    c = b + a / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    const double factor = c * d;
    f *= factor;
    return factor;
  }
};

}  // namespace failslow::stats::detail
