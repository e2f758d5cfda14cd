// failslow/stats/detail/impl/normal_quantile.ipp -- the definitions of stats/detail/normal_quantile.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cmath>
#include <limits>

#include "failslow/stats/detail/normal_quantile.hpp"

namespace failslow::stats::detail {

/// c[0] + c[1] x + ... + c[7] x^7 (Horner).
inline double normal_quantile_poly(const double (&c)[8], double x) noexcept {
  double y = c[7];
  for (int i = 6; i >= 0; --i) y = y * x + c[i];
  return y;
}

FAILSLOW_FUNC_DEF double normal_quantile(double p) noexcept {
  // Wichura's coefficients, lowest degree first (A, B: central; C, D: r <= 5; E, F: r > 5).
  static constexpr double a[8] = {3.3871328727963666080e0, 1.3314166789178437745e2, 1.9715909503065514427e3,
                                  1.3731693765509461125e4, 4.5921953931549871457e4, 6.7265770927008700853e4,
                                  3.3430575583588128105e4, 2.5090809287301226727e3};
  static constexpr double b[8] = {1.0,
                                  4.2313330701600911252e1,
                                  6.8718700749205790830e2,
                                  5.3941960214247511077e3,
                                  2.1213794301586595867e4,
                                  3.9307895800092710610e4,
                                  2.8729085735721942674e4,
                                  5.2264952788528545610e3};
  static constexpr double c[8] = {1.42343711074968357734e0,  4.63033784615654529590e0, 5.76949722146069140550e0,
                                  3.64784832476320460504e0,  1.27045825245236838258e0, 2.41780725177450611770e-1,
                                  2.27238449892691845833e-2, 7.74545014278341407640e-4};
  static constexpr double d[8] = {1.0,
                                  2.05319162663775882187e0,
                                  1.67638483018380384940e0,
                                  6.89767334985100004550e-1,
                                  1.48103976427480074590e-1,
                                  1.51986665636164571966e-2,
                                  5.47593808499534494600e-4,
                                  1.05075007164441684324e-9};
  static constexpr double e[8] = {6.65790464350110377720e0,  5.46378491116411436990e0,  1.78482653991729133580e0,
                                  2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
                                  2.71155556874348757815e-5, 2.01033439929228813265e-7};
  static constexpr double f[8] = {1.0,
                                  5.99832206555887937690e-1,
                                  1.36929880922735805310e-1,
                                  1.48753612908506148525e-2,
                                  7.86869131145613259100e-4,
                                  1.84631831751005468180e-5,
                                  1.42151175831644588870e-7,
                                  2.04426310338993978564e-15};
  if (!(p == p)) return p;
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  const double q = p - 0.5;
  if (std::fabs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q * normal_quantile_poly(a, r) / normal_quantile_poly(b, r);
  }
  const double r = std::sqrt(-std::log(q < 0 ? p : 1.0 - p));
  const double z = r <= 5.0 ? normal_quantile_poly(c, r - 1.6) / normal_quantile_poly(d, r - 1.6)
                            : normal_quantile_poly(e, r - 5.0) / normal_quantile_poly(f, r - 5.0);
  return q < 0 ? -z : z;
}

}  // namespace failslow::stats::detail
