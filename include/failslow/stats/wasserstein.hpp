// failslow/stats/wasserstein.hpp -- the Wasserstein-1 (earth mover's) distance.
//
// Synopsis
//   W1(F, G) = integral |F(x) - G(x)| dx = integral_0^1 |F^-1(u) - G^-1(u)| du
//     wasserstein1(u, v [, u_weights, v_weights])  exact, two sample sets of any sizes,
//           optionally weighted: merge the sorted values and integrate |F_u - F_v| between
//           consecutive points. Equals scipy.stats.wasserstein_distance.     O((n+m) log(n+m))
//           Unweighted CDF steps are counted as integers (|i m - j n| / (n m)), so a shift of
//           integer data by c gives exactly |c|.
//     wasserstein1_sorted(u, v)   both already sorted, unweighted; equal sizes reduce to
//           mean_i |u_(i) - v_(i)|.                                           O(n + m)
//     wasserstein1(a, b)          two lognormal mixtures (lognormal.hpp): adaptive
//           Gauss-Kronrod (15 points) on ln x over each interval between consecutive
//           breakpoints (point masses, truncation bounds, component medians), covering the
//           quantiles 1e-14 .. 1 - 1e-14 of both, and where the CDFs cross (found by a sign
//           scan of 32 points per interval and Brent's method).             relative error ~1e-9
//     wasserstein1_cdf(x, F, G, rule)   two CDFs tabulated on a common ascending grid:
//           step (F, G constant on [x_i, x_i+1), exact for empirical CDFs with jumps on the
//           grid) or trapezoid (F, G continuous; exact when F - G keeps its sign on a cell and
//           is linear there; a sign change inside a cell is integrated piecewise).
//     wasserstein1(ca, cb)        two single untruncated lognormals (lognormal_component, or
//           point masses > 0): exact closed form. Q_a - Q_b = e^(mu_a + s_a z) - e^(mu_b + s_b z)
//           changes sign at most once, at z* = (mu_b - mu_a) / (s_a - s_b), and
//           E[e^(mu + s Z); Z < z] = e^(mu + s^2/2) Phi(z - s), so W1 = |D(-inf, z*)| + |D(z*, inf)|
//           with D the difference of the partial expectations; equal sigmas give
//           |e^mu_a - e^mu_b| e^(s^2/2), the difference of the means.          O(1), a few ulps
//     quantile_vector(mixture | sorted samples, K)  Q(u_k) at the midpoints u_k = (k + 1/2)/K;
//           for mixtures without root finding (quantile_grid.hpp: closed form for one
//           lognormal, interpolated between exact CDF nodes otherwise, ~1e-5 relative in Q)
//     wasserstein1_quantiles(qa, qb)  mean_k |qa_k - qb_k|, the form used for W1 matrices.
//   Accuracy of the quantile form: a midpoint rule on integral_0^1 |Q_a - Q_b| du; on each cell
//   of width 1/K the integrand varies by at most the variation of Q_a and Q_b on that cell, so
//       |W1_K - W1| <= (range_a + range_b) / K
//   for bounded supports (range = max - min; empirical or truncated distributions). K = 256
//   (default) bounds it by 0.8 % of the summed ranges; typical kernel distributions are far
//   below it (tests measure 1e-4 relative errors). Unbounded (untruncated) tails add the
//   mass beyond the outer midpoints, which the tests measure for realistic sigmas.
// Errors: empty inputs, NaN/Inf values, negative or all-zero weights, weight vectors of
//   another length, a grid that is not ascending or CDF tables of another length throw
//   failslow::invalid_argument / failslow::domain_error.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/quantile_grid.hpp"

namespace failslow::stats {

namespace detail {

FAILSLOW_FUNC void check_w1_sample(const std::vector<double>& x, const std::vector<double>* w, const char* which);

// sum_i |a_i - b_i| over eight independent lanes: without -ffast-math a compiler may not
// reorder one running sum, but it vectorises eight separate ones.
inline double l1_distance(const double* a, const double* b, std::size_t n) noexcept {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const std::size_t blocks = n / 8, tail = n % 8;
  for (std::size_t blk = 0; blk < blocks; ++blk, a += 8, b += 8)
    for (std::size_t l = 0; l < 8; ++l) lane[l] += std::abs(a[l] - b[l]);
  double s = 0;
  for (std::size_t l = 0; l < tail; ++l) s += std::abs(a[l] - b[l]);
  for (double v : lane) s += v;
  return s;
}

}  // namespace detail

/// Exact W1 between two ascending sorted unweighted samples.
FAILSLOW_FUNC double wasserstein1_sorted(const double* u, std::size_t n, const double* v, std::size_t m);

/// Exact W1 between two (optionally weighted) sample sets.
FAILSLOW_FUNC double wasserstein1(const std::vector<double>& u, const std::vector<double>& v,
                                  const std::vector<double>* u_weights = nullptr,
                                  const std::vector<double>* v_weights = nullptr);

/// W1 between two lognormal mixtures (numerical integration of |F_a - F_b|, see synopsis).
FAILSLOW_FUNC double wasserstein1(const lognormal_mixture& a, const lognormal_mixture& b);

enum class cdf_rule { step, trapezoid };
/// Number of cdf_rule values (they are 0 .. cdf_rule_count - 1).
inline constexpr std::size_t cdf_rule_count = 2;

/// W1 between two CDFs tabulated on the ascending grid x.
FAILSLOW_FUNC double wasserstein1_cdf(const std::vector<double>& x, const std::vector<double>& f,
                                      const std::vector<double>& g, cdf_rule rule = cdf_rule::trapezoid);

/// Q(u_k), u_k = (k + 1/2) / K, of a mixture (quantile_grid.hpp; build the grid once and use
/// its overload when many vectors share one K).
FAILSLOW_FUNC std::vector<double> quantile_vector(const lognormal_mixture& m, std::size_t k = 256);

/// Exact W1 between two untruncated lognormals (either may be a point mass > 0), see synopsis.
FAILSLOW_FUNC double wasserstein1(const lognormal_component& a, const lognormal_component& b);

/// Q(u_k), u_k = (k + 1/2) / K, of an ascending sorted sample, Q the empirical quantile
/// function (inverted CDF: the exact quantile function of the sample's distribution).
FAILSLOW_FUNC std::vector<double> quantile_vector_sorted(const double* x, std::size_t n, std::size_t k = 256);

/// mean_k |qa_k - qb_k|.
inline double wasserstein1_quantiles(const double* qa, const double* qb, std::size_t k) noexcept {
  return detail::l1_distance(qa, qb, k) / static_cast<double>(k);
}
inline double wasserstein1_quantiles(const std::vector<double>& qa, const std::vector<double>& qb) {
  if (qa.size() != qb.size() || qa.empty())
    throw invalid_argument("wasserstein1_quantiles: quantile vectors must be non-empty and of one length");
  return wasserstein1_quantiles(qa.data(), qb.data(), qa.size());
}

}  // namespace failslow::stats

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/impl/wasserstein.ipp"
#endif
