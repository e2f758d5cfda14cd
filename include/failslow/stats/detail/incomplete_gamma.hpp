// failslow/stats/detail/incomplete_gamma.hpp -- the regularised incomplete gamma functions and
// their inverses, without a special-function library (the chi-square tails of detect/).
//
//   gamma_p(a, x) = P(a, x) = gamma(a, x) / Gamma(a)      (lower; the Gamma(a, 1) CDF at x)
//   gamma_q(a, x) = Q(a, x) = 1 - P(a, x)                 (upper)
//   gamma_p_inverse(a, p), gamma_q_inverse(a, q)          the x with P(a, x) = p, Q(a, x) = q
//   chi_squared_quantile(d, q) = 2 P^-1(d/2, q)
// For a chi-square with d degrees of freedom: CDF(x) = P(d/2, x/2), quantile(p) = 2 P^-1(d/2, p).
// Method: the power series of P for x < a + 1, the continued fraction of Q (modified Lentz) for
// x >= a + 1, each giving the smaller tail directly, so both tails keep their relative precision
// (Q(5, 200) = 1.3e-79, not 0). The common factor x^a e^-x / Gamma(a) is taken, for a >= 10, as
// exp(-a (u - ln(1 + u)) + ln(a / 2 pi) / 2 - s(a)) with u = (x - a) / a and s(a) Stirling's
// correction, which keeps its relative error near eps where x is near a (a ln x - x - lgamma(a)
// loses eps a ln a there). The inverses: Newton's method on the log of the tail that is smaller
// at the answer (near linear in both far tails), started from Wilson-Hilferty's cube root (normal
// quantile: normal_quantile.hpp) or the small-x series, inside a bracket that falls back to bisection.
// Complexity: O(sqrt(a) + 1) terms near x = a, fewer away from it; the inverse about 3-6
//   evaluations.
// Accuracy: against 40-digit mpmath values (tests/reference/gen_stats_fixtures.py; a from 0.5 to
//   5000, values down to 1e-300): P and Q within 5e-14 + 2.3e-16 |ln value| relative (a tail of
//   1e-210 is exp(-483), whose exponent alone rounds by 1e-13), the inverses within 1e-13. (scipy's
//   gammainc is off by up to 1.5e-12 on the same points.)
// Errors: none thrown (the callers check their arguments); a <= 0, x < 0 or NaN give NaN.
#pragma once

#include "failslow/core/compile_mode.hpp"

namespace failslow::stats::detail {

/// ln Gamma(a) - Stirling's (a - 1/2) ln a - a + ln(2 pi)/2, for a >= 10 (six terms: 1e-17).
inline double stirling_correction(double a) noexcept {
  const double r = 1 / a, r2 = r * r;
  return r * (1.0 / 12 -
              r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 - r2 * (1.0 / 1188 - r2 * 691.0 / 360360)))));
}

/// P(a, x) (upper = false) or Q(a, x) (upper = true), with the edges and invalid arguments.
FAILSLOW_FUNC double gamma_tail(double a, double x, bool upper) noexcept;

inline double gamma_p(double a, double x) noexcept { return gamma_tail(a, x, false); }
inline double gamma_q(double a, double x) noexcept { return gamma_tail(a, x, true); }

/// The x with P(a, x) = p (upper = false) or Q(a, x) = p (upper = true), 0 < p < 1.
FAILSLOW_FUNC double gamma_inverse(double a, double p, bool upper) noexcept;

inline double gamma_p_inverse(double a, double p) noexcept { return gamma_inverse(a, p, false); }
inline double gamma_q_inverse(double a, double q) noexcept { return gamma_inverse(a, q, true); }

/// The q-quantile of a chi-square with `dof` degrees of freedom, 2 P^-1(dof / 2, q).
inline double chi_squared_quantile(double dof, double q) noexcept { return 2 * gamma_p_inverse(dof / 2, q); }

}  // namespace failslow::stats::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/detail/impl/incomplete_gamma.ipp"
#endif
