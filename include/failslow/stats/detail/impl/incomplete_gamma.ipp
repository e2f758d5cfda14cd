// failslow/stats/detail/impl/incomplete_gamma.ipp -- the definitions of stats/detail/incomplete_gamma.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "failslow/stats/detail/continued_fraction.hpp"
#include "failslow/stats/detail/incomplete_gamma.hpp"
#include "failslow/stats/detail/normal_quantile.hpp"

namespace failslow::stats::detail {

/// u - ln(1 + u), without cancellation for small |u| (u > -1).
inline double minus_log1p_plus(double u) noexcept {
  if (std::abs(u) > 0.25) return u - std::log1p(u);  // no cancellation (>= u^2 / 5 here)
  // sum_{k>=2} (-1)^k u^k / k
  double term = u * u, sum = 0;
  for (int k = 2; k < 60; ++k) {
    const double t = term / k;
    sum += (k % 2 == 0) ? t : -t;
    if (std::abs(t) <= 1e-17 * std::abs(sum)) break;
    term *= u;
  }
  return sum;
}

/// x^a e^-x / Gamma(a), the factor both the series and the continued fraction carry.
inline double gamma_prefix(double a, double x) noexcept {
  if (x == 0) return a == 1 ? 1.0 : (a < 1 ? std::numeric_limits<double>::infinity() : 0.0);
  if (a < 10) return std::exp(a * std::log(x) - x - std::lgamma(a));
  constexpr double two_pi = 6.283185307179586476925;
  const double u = (x - a) / a;
  // -a (u - ln(1 + u)), as a - x + a ln(x / a) away from x = a (1 + u would lose x / a's digits).
  const double exponent = std::abs(u) <= 0.25 ? -a * minus_log1p_plus(u) : a - x + a * std::log(x / a);
  return std::exp(exponent + 0.5 * std::log(a / two_pi) - stirling_correction(a));
}

/// P(a, x) / prefix by the power series sum_{n>=0} x^n / (a (a+1) ... (a+n)); x < a + 1.
inline double gamma_p_series(double a, double x) noexcept {
  double term = 1 / a, sum = term;
  for (int n = 1; n < 100000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

/// Q(a, x) / prefix by Legendre's continued fraction (modified Lentz); x >= a + 1.
inline double gamma_q_fraction(double a, double x) noexcept {
  // 1 / (x + 1 - a + a_1 / (x + 3 - a + a_2 / (...))), a_i = -i (i - a): the first term taken.
  double b = x + 1 - a;
  lentz_fraction fraction{1 / b, 1e300, 1 / b};
  for (int i = 1; i < 100000; ++i) {
    b += 2;
    if (std::abs(fraction.step(-i * (i - a), b) - 1) < 1e-16) break;
  }
  return fraction.f;
}

/// P(a, x) (upper = false) or Q(a, x) (upper = true) for a > 0, 0 < x < inf: the series or the
/// fraction, whichever converges at x, gives its own tail directly and the other as 1 minus it.
/// `prefix` receives x^a e^-x / Gamma(a) (the inverse's Newton step needs it).
inline double gamma_tail(double a, double x, bool upper, double& prefix) noexcept {
  prefix = gamma_prefix(a, x);
  const bool series_side = x < a + 1;
  const double part = series_side ? std::min(1.0, prefix * gamma_p_series(a, x)) : prefix * gamma_q_fraction(a, x);
  return upper == series_side ? 1 - part : part;
}

FAILSLOW_FUNC_DEF double gamma_tail(double a, double x, bool upper) noexcept {
  if (!(a > 0) || !(x >= 0)) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return upper ? 1.0 : 0.0;
  if (std::isinf(x)) return upper ? 0.0 : 1.0;
  double prefix;
  return gamma_tail(a, x, upper, prefix);
}

FAILSLOW_FUNC_DEF double gamma_inverse(double a, double p, bool upper) noexcept {
  if (!(a > 0) || !(p >= 0 && p <= 1)) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0) return upper ? std::numeric_limits<double>::infinity() : 0.0;
  if (p == 1) return upper ? 0.0 : std::numeric_limits<double>::infinity();
  const double lower_p = upper ? 1 - p : p;  // only for the start and for choosing the tail
  // Start: Wilson-Hilferty, x = a (1 - 1/(9a) + z sqrt(1/(9a)))^3 with z the normal quantile of the
  // lower tail (taken from p itself for an upper tail, so a tiny p keeps its digits).
  const double z = upper ? -normal_quantile(p) : normal_quantile(p);
  const double k = 1 / (9 * a);
  double x = a * std::pow(std::max(1 - k + z * std::sqrt(k), 0.0), 3);
  // Small lower tail or small a: P(a, x) ~ x^a / Gamma(a + 1) for small x.
  if (!(x > 0) || (lower_p < 0.5 && x < 0.5 * a)) {
    const double xs = std::exp((std::log(lower_p) + std::lgamma(a + 1)) / a);
    if (xs == 0) return 0.0;  // the answer is below the smallest double
    if (std::isfinite(xs)) x = xs;
  }
  if (!(x > 0) || !std::isfinite(x)) x = a;
  // Solve on the tail that is the smaller one at the answer: it keeps its relative precision.
  const bool solve_upper = lower_p > 0.5;
  const double log_target = std::log(solve_upper == upper ? p : 1 - p);
  double lo = 0, hi = std::numeric_limits<double>::infinity();
  // Newton on g = ln tail - ln target, in ln x for the lower tail and in x for the upper, where g
  // is close to linear (ln P ~ a ln x, ln Q ~ -x); g' = +-density / tail; a step leaving the
  // bracket bisects.
  for (int it = 0; it < 200; ++it) {
    double prefix;
    const double tail_value = gamma_tail(a, x, solve_upper, prefix);
    double next = std::numeric_limits<double>::quiet_NaN();
    if (!(tail_value > 0)) {  // underflow: far beyond the answer on the tail's side
      (solve_upper ? hi : lo) = x;
    } else {
      const double g = std::log(tail_value) - log_target;  // > 0: tail too large
      if (g == 0) return x;
      // P grows with x and Q falls: a P too large or a Q too small means x is too large.
      ((g > 0) != solve_upper ? hi : lo) = x;
      const double density = prefix / x;  // dP/dx
      if (density > 0 && std::isfinite(density)) {
        const double slope = (solve_upper ? -density : density) / tail_value;
        next = solve_upper ? x - g / slope : x * std::exp(-g / (slope * x));
      }
    }
    if (!(next > lo && next < hi))
      next = std::isinf(hi) ? std::max(2 * x, 2 * lo + 1) : (lo > 0 ? std::sqrt(lo) * std::sqrt(hi) : 0.5 * hi);
    if (std::abs(next - x) <= 2 * std::numeric_limits<double>::epsilon() * x) return next;
    if (!std::isinf(hi) && hi - lo <= 2 * std::numeric_limits<double>::epsilon() * hi) return 0.5 * (lo + hi);
    x = next;
  }
  return x;
}

}  // namespace failslow::stats::detail
