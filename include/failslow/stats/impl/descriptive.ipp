// failslow/stats/impl/descriptive.ipp -- the definitions of stats/descriptive.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "failslow/core/error.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::stats {

FAILSLOW_FUNC_DEF array_moments two_pass_moments(const double* x, std::size_t n) {
  if (n == 0) throw invalid_argument("moments: empty sample");
  // Eight independent partial sums per loop: the compiler may then vectorise without
  // reassociating (no -ffast-math), and the error grows no faster than with one sum.
  constexpr std::size_t lanes = 8;
  double part[lanes] = {}, lo = x[0], hi = x[0];
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes)
    for (std::size_t l = 0; l < lanes; ++l) {
      part[l] += x[i + l];
      lo = x[i + l] < lo ? x[i + l] : lo;
      hi = x[i + l] > hi ? x[i + l] : hi;
    }
  double sum = 0;
  for (; i < n; ++i) {
    sum += x[i];
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  for (double p : part) sum += p;
  if (!std::isfinite(sum) || !std::isfinite(lo) || !std::isfinite(hi))
    throw domain_error("moments: sample contains NaN or infinity, or its sum overflows");
  const double mean = sum / static_cast<double>(n);
  double sq[lanes] = {}, lin[lanes] = {};
  for (i = 0; i + lanes <= n; i += lanes)
    for (std::size_t l = 0; l < lanes; ++l) {
      const double d = x[i + l] - mean;
      sq[l] += d * d;
      lin[l] += d;
    }
  double m2 = 0, correction = 0;
  for (; i < n; ++i) {
    const double d = x[i] - mean;
    m2 += d * d;
    correction += d;
  }
  for (std::size_t l = 0; l < lanes; ++l) {
    m2 += sq[l];
    correction += lin[l];
  }
  // Corrected two-pass (Chan, Golub & LeVeque): removes the rounding left in the mean.
  m2 -= correction * correction / static_cast<double>(n);
  array_moments m;
  m.count = n;
  m.mean = mean + correction / static_cast<double>(n);
  m.variance = n > 1 ? std::max(0.0, m2) / static_cast<double>(n - 1) : 0.0;
  m.min = lo;
  m.max = hi;
  return m;
}

}  // namespace failslow::stats
