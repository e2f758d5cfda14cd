// failslow/stats/detail/gauss_kronrod.hpp -- adaptive 15-point Gauss-Kronrod quadrature.
//
//   gauss_kronrod15(f, a, b, max_depth, tolerance)  ~ integral of f over [a, b]
// The 15-point Kronrod rule K15 with its embedded 7-point Gauss rule G7 (QUADPACK's qk15 nodes and
// weights; Piessens et al. 1983): K15 integrates polynomials of degree 22 exactly, |K15 - G7| is
// the error estimate. An interval whose estimate exceeds tolerance x the K15 integral of |f| is
// halved, each half integrated the same way, at most max_depth halvings deep.
// Complexity: 15 evaluations of f per interval visited, at most 15 (2^(max_depth + 1) - 1).
// Accuracy: for f smooth on [a, b] (analytic in a neighbourhood), the error is far below the
//   estimate |K15 - G7|, which is held below tolerance relative to the integral of |f|; kinks and
//   jumps must be end points (callers split there).
// Errors: none; a NaN from f propagates into the result.
#pragma once

#include <cmath>

namespace failslow::stats::detail {

struct kronrod15_nodes {
  // Abscissae on [-1, 1], largest first; odd positions (1, 3, 5) and the centre are G7's nodes.
  static constexpr double x[8] = {0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
                                  0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
                                  0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
                                  0.207784955007898467600689403773245, 0.0};
  static constexpr double kronrod[8] = {0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
                                        0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
                                        0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
                                        0.204432940075298892414161999234649, 0.209482141084727828012999174891714};
  // G7's weights for x[1], x[3], x[5] and the centre.
  static constexpr double gauss[4] = {0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
                                      0.381830050505118944950369775488975, 0.417959183673469387755102040816327};
};

template <class F>
double gauss_kronrod15(F&& f, double a, double b, unsigned max_depth = 15, double tolerance = 1e-11) {
  using n = kronrod15_nodes;
  const double centre = 0.5 * (a + b), half = 0.5 * (b - a);
  const double fc = f(centre);
  double k = n::kronrod[7] * fc, g = n::gauss[3] * fc, l1 = n::kronrod[7] * std::abs(fc);
  for (int i = 0; i < 7; ++i) {
    const double dx = half * n::x[i];
    const double f1 = f(centre - dx), f2 = f(centre + dx);
    k += n::kronrod[i] * (f1 + f2);
    l1 += n::kronrod[i] * (std::abs(f1) + std::abs(f2));
    if (i % 2 == 1) g += n::gauss[i / 2] * (f1 + f2);
  }
  const double error = std::abs(half) * std::abs(k - g);
  if (max_depth == 0 || !(error > tolerance * std::abs(half) * l1)) return half * k;
  return gauss_kronrod15(f, a, centre, max_depth - 1, tolerance) +
         gauss_kronrod15(f, centre, b, max_depth - 1, tolerance);
}

}  // namespace failslow::stats::detail
