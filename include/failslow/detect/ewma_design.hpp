// failslow/detect/ewma_design.hpp -- average run length of a two-sided EWMA chart (Brook &
// Evans 1972 Markov chain, as in Lucas & Saccucci 1990), and the limit width L for a target
// in-control ARL.
//
// Synopsis
//   Chart: z_t = lambda x_t + (1 - lambda) z_{t-1}, x_t ~ N(mu + shift sigma, sigma^2), z_0 = mu,
//   asymptotic limits mu +- h sigma, h = L sqrt(lambda / (2 - lambda)) (failslow/detect/ewma.hpp).
//   ewma_arl(lambda, L, shift, states): the in-control interval (-h, h) (in sigma units) is cut
//   into `states` cells of width w = 2h / states with midpoints c_i; from c_i the chart moves to
//   cell j with probability
//     P_ij = Phi((c_j + w/2 - (1 - lambda) c_i) / lambda - shift) - Phi((c_j - w/2 - (1 - lambda) c_i) / lambda -
//     shift),
//   and the ARL vector solves (I - P) a = 1; the result is a at the cell holding 0.
//   ewma_limit_for_arl(lambda, arl0): the L in [0.5, 8] whose in-control ARL is arl0 (Illinois
//   regula falsi on ln ARL, which grows smoothly with L; about 8 ARL evaluations).
// Complexity: O(states^3) (dense LU); states = 401 takes a few ms.
// Accuracy: the discretisation error falls as 1/states^2: states = 401 is within 0.1 % of the
//   converged ARL for lambda >= 0.05 (checked against the reference script); lambda = 1 is exact
//   (the Shewhart ARL 1 / (Phi(-L - shift) + Phi(-L + shift))).
// Errors: lambda outside (0, 1], L <= 0, states < 3 or even (the start cell must be centred), a
//   non-finite shift, or a target ARL <= 1 or outside the ARLs of L in [0.5, 8] throw
//   failslow::invalid_argument.
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>
#include <cstddef>

#include "failslow/core/error.hpp"

namespace failslow::detect {

// Both functions are templates on Real (always double, never given) so that the dense LU is
// instantiated only where an ARL is computed, not in every file that includes this (issue 22).
template <class Real = double>
double ewma_arl(double lambda, double L, double shift = 0.0, std::size_t states = 401) {
  if (!(lambda > 0.0 && lambda <= 1.0)) throw invalid_argument("ewma_arl: lambda must be in (0, 1]");
  if (!(L > 0.0) || !std::isfinite(L)) throw invalid_argument("ewma_arl: L must be > 0");
  if (states < 3 || states % 2 == 0) throw invalid_argument("ewma_arl: states must be odd and >= 3");
  if (!std::isfinite(shift)) throw invalid_argument("ewma_arl: shift must be finite");
  const auto m = static_cast<Eigen::Index>(states);
  const double h = L * std::sqrt(lambda / (2.0 - lambda));
  const double w = 2.0 * h / static_cast<double>(states);
  auto phi = [](double v) { return 0.5 * std::erfc(-v / std::sqrt(2.0)); };
  using matrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic>;
  using vector = Eigen::Matrix<Real, Eigen::Dynamic, 1>;
  matrix a = matrix::Identity(m, m);
  for (Eigen::Index i = 0; i < m; ++i) {
    const double ci = -h + (static_cast<double>(i) + 0.5) * w;
    const double from = (1.0 - lambda) * ci;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double lo = -h + static_cast<double>(j) * w;
      const double hi = lo + w;
      a(i, j) -= phi((hi - from) / lambda - shift) - phi((lo - from) / lambda - shift);
    }
  }
  const vector arl = a.partialPivLu().solve(vector::Ones(m));
  return arl((m - 1) / 2);
}

template <class Real = double>
double ewma_limit_for_arl(double lambda, double target_arl, std::size_t states = 401) {
  if (!(target_arl > 1.0) || !std::isfinite(target_arl))
    throw invalid_argument("ewma_limit_for_arl: target ARL must be > 1");
  // Illinois (regula falsi) on f(L) = ln ARL(L) - ln target, which is smooth and increasing.
  auto f = [&](double L) { return std::log(ewma_arl<Real>(lambda, L, 0.0, states)) - std::log(target_arl); };
  double a = 0.5, b = 8.0, fa = f(a), fb = f(b);
  if (fb < 0.0) throw invalid_argument("ewma_limit_for_arl: target ARL beyond L = 8");
  if (fa > 0.0) throw invalid_argument("ewma_limit_for_arl: target ARL below that of L = 0.5");
  int side = 0;
  for (int it = 0; it < 100 && b - a > 1e-9; ++it) {
    const double c = (a * fb - b * fa) / (fb - fa);
    const double fc = f(c);
    if (fc == 0.0) return c;
    if ((fc > 0.0) == (fb > 0.0)) {
      b = c;
      fb = fc;
      if (side == -1) fa /= 2.0;
      side = -1;
    } else {
      a = c;
      fa = fc;
      if (side == 1) fb /= 2.0;
      side = 1;
    }
    if (std::abs(fc) < 1e-12) return c;
  }
  return 0.5 * (a + b);
}

#ifdef FAILSLOW_SEPARATE_COMPILATION
// Separately compiled mode: instantiated once in src/failslow.cpp (target failslow::compiled).
extern template double ewma_arl<double>(double, double, double, std::size_t);
extern template double ewma_limit_for_arl<double>(double, double, std::size_t);
#endif

}  // namespace failslow::detect
