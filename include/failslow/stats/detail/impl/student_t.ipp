// failslow/stats/detail/impl/student_t.ipp -- the definitions of stats/detail/student_t.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "failslow/stats/detail/student_t.hpp"

namespace failslow::stats::detail {

FAILSLOW_FUNC_DEF double student_t_upper_tail(double t, std::uint64_t nu) {
  constexpr double pi = 3.14159265358979323846;
  if (!(t == t)) return t;
  if (t < 0) return 1 - student_t_upper_tail(-t, nu);
  if (nu == 0 || t == 0) return 0.5;
  if (nu > 20000) {
    // Normal with the first Cornish-Fisher correction: z = t (1 - 1/(4 nu)) / sqrt(1 + t^2/(2 nu)).
    const double n = static_cast<double>(nu);
    const double z = t * (1 - 1 / (4 * n)) / std::sqrt(1 + t * t / (2 * n));
    return 0.5 * std::erfc(z / std::sqrt(2.0));
  }
  const double n = static_cast<double>(nu);
  const double theta = std::atan(t / std::sqrt(n));
  const double s = std::sin(theta), c = std::cos(theta), c2 = c * c;
  const bool odd = nu % 2 == 1;
  // term_k = prod_{j=1..k} r_j c^2, r_j = 2j/(2j+1) (odd nu) or (2j-1)/(2j) (even nu); the finite
  // sums S run over k < K, K = (nu - 1)/2 (odd) or nu/2 (even).
  auto ratio = [&](std::uint64_t j) {
    return odd ? static_cast<double>(2 * j) / static_cast<double>(2 * j + 1)
               : static_cast<double>(2 * j - 1) / static_cast<double>(2 * j);
  };
  const std::uint64_t K = odd ? (nu - 1) / 2 : nu / 2;
  double term = 1, S = 0;
  for (std::uint64_t k = 0; k < K; ++k) {
    if (k > 0) term *= c2 * ratio(k);
    S += term;
  }
  // A = P(|T| <= t): odd 2/pi (theta + s c S), even s S.
  const double A = odd ? 2 / pi * (theta + s * c * S) : s * S;
  if (1 - A >= 0.1) return 0.5 * (1 - A);
  // A far tail: 1 - A is the rest of the convergent series the finite sum truncates (odd: the
  // series of arcsin(c) / s, whose full sum makes theta + s c S = pi / 2; even: of 1 / s),
  // summed from k = K on without cancellation.
  double tail = 0;
  if (K > 0) {
    // term currently holds term_{K-1}.
    for (std::uint64_t k = K; k < K + 10000000; ++k) {
      term *= c2 * ratio(k);
      tail += term;
      if (term < 1e-17 * tail) break;
    }
  } else {
    // nu = 1 (K = 0): 1 - A = 2 phi / pi, phi = atan(1 / t).
    return std::atan2(1.0, t) / pi;
  }
  return 0.5 * (odd ? 2 / pi * s * c * tail : s * tail);
}

FAILSLOW_FUNC_DEF double student_t_upper_quantile(double p, std::uint64_t nu) {
  if (!(p > 0)) return INFINITY;
  if (p >= 0.5) return 0;
  if (nu > 1000) {
    // Cornish-Fisher (A&S 26.7.5, four terms) from the normal quantile, found by bisection on
    // erfc: below 1e-9 relative error for nu > 1000 and p >= 1e-12.
    double lo = 0, hi = 40;
    for (int i = 0; i < 100; ++i) {
      const double mid = 0.5 * (lo + hi);
      (0.5 * std::erfc(mid / std::sqrt(2.0)) > p ? lo : hi) = mid;
    }
    const double z = 0.5 * (lo + hi), n = static_cast<double>(nu);
    const double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
    const double g1 = (z3 + z) / 4, g2 = (5 * z5 + 16 * z3 + 3 * z) / 96,
                 g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384,
                 g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
    return z + g1 / n + g2 / (n * n) + g3 / (n * n * n) + g4 / (n * n * n * n);
  }
  double lo = 0, hi = 1;
  while (student_t_upper_tail(hi, nu) > p && hi < 1e300) hi *= 2;
  for (int i = 0; i < 100 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_upper_tail(mid, nu) > p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace failslow::stats::detail
