// failslow/stats/detail/bracketed_root.hpp -- a root of a continuous function inside a bracket.
//
//   bracketed_root(f, a, b, fa, fb, bits, max_iterations)  -> root_bracket{lo, hi, iterations}
// Brent's method (Brent 1973, "Algorithms for Minimization without Derivatives", ch. 4): inverse
// quadratic interpolation or the secant step where they land well inside the bracket, bisection
// otherwise, so it converges superlinearly on smooth functions and never slower than bisection.
// f(a) and f(b) must have opposite signs (or one be 0). The result is a bracket [lo, hi] that
// still holds a sign change, narrowed until hi - lo <= max(2^(1 - bits), 4 eps) min(|lo|, |hi|)
// (the relative width the caller asks for, as Boost.Math's eps_tolerance(bits) words it), until
// f is exactly 0 (lo == hi), or until max_iterations evaluations of f.
// Errors: none thrown; a bracket without a sign change, or a NaN end, comes back unchanged with
//   iterations = 0 (callers check their bracket first).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace failslow::stats::detail {

struct root_bracket {
  double lo = 0, hi = 0;         ///< the final bracket, lo <= hi
  std::uint32_t iterations = 0;  ///< evaluations of f spent
};

template <class F>
root_bracket bracketed_root(F&& f, double a, double b, double fa, double fb, int bits = 52,
                            std::uint32_t max_iterations = 200) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const double rel = std::max(std::ldexp(1.0, 1 - bits), 4 * eps);
  auto result = [](double x, double y, std::uint32_t n) { return root_bracket{std::min(x, y), std::max(x, y), n}; };
  if (fa == 0) return result(a, a, 0);
  if (fb == 0) return result(b, b, 0);
  if (!(std::signbit(fa) != std::signbit(fb)) || std::isnan(fa) || std::isnan(fb)) return result(a, b, 0);
  // b holds the best estimate, c the other end of the bracket, a the previous b.
  double c = a, fc = fa, d = b - a, e = d;
  std::uint32_t n = 0;
  for (;;) {
    if (std::signbit(fb) == std::signbit(fc)) {
      c = a;
      fc = fa;
      d = e = b - a;
    }
    if (std::abs(fc) < std::abs(fb)) {
      a = b;
      b = c;
      c = a;
      fa = fb;
      fb = fc;
      fc = fa;
    }
    // Half the width the bracket may end at, and never below a step that moves b.
    const double tol = std::max(0.5 * rel * std::min(std::abs(b), std::abs(c)),
                                std::max(2 * eps * std::abs(b), std::numeric_limits<double>::min()));
    const double half = 0.5 * (c - b);
    if (fb == 0) return result(b, b, n);
    if (std::abs(half) <= tol || n >= max_iterations) return result(b, c, n);
    if (std::abs(e) >= tol && std::abs(fa) > std::abs(fb)) {
      double p, q;
      const double s = fb / fa;
      if (a == c) {  // two points: secant
        p = 2 * half * s;
        q = 1 - s;
      } else {  // three points: inverse quadratic interpolation
        const double qa = fa / fc, r = fb / fc;
        p = s * (2 * half * qa * (qa - r) - (b - a) * (r - 1));
        q = (qa - 1) * (r - 1) * (s - 1);
      }
      if (p > 0)
        q = -q;
      else
        p = -p;
      // Take the interpolated step only if it lands inside the bracket and shrinks fast enough.
      if (2 * p < std::min(3 * half * q - std::abs(tol * q), std::abs(e * q))) {
        e = d;
        d = p / q;
      } else {
        d = e = half;
      }
    } else {
      d = e = half;
    }
    a = b;
    fa = fb;
    b += std::abs(d) > tol ? d : std::copysign(tol, half);
    fb = f(b);
    ++n;
  }
}

template <class F>
root_bracket bracketed_root(F&& f, double a, double b, int bits = 52, std::uint32_t max_iterations = 200) {
  const double fa = f(a), fb = f(b);
  return bracketed_root(f, a, b, fa, fb, bits, max_iterations);
}

}  // namespace failslow::stats::detail
