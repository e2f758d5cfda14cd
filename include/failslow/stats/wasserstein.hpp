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

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/bracketed_root.hpp"
#include "failslow/stats/detail/gauss_kronrod.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/quantile_grid.hpp"

namespace failslow::stats {

namespace detail {

template <class = void>
inline void check_w1_sample(const std::vector<double>& x, const std::vector<double>* w, const char* which) {
  if (x.empty()) throw invalid_argument(std::string("wasserstein1: ") + which + " is empty");
  for (double v : x)
    if (!std::isfinite(v)) throw domain_error(std::string("wasserstein1: ") + which + " contains NaN or infinity");
  if (w) {
    if (w->size() != x.size())
      throw invalid_argument(std::string("wasserstein1: weights of ") + which + " differ in length");
    double total = 0;
    for (double v : *w) {
      if (!(v >= 0) || !std::isfinite(v)) throw domain_error("wasserstein1: weights must be finite and >= 0");
      total += v;
    }
    if (!(total > 0)) throw domain_error("wasserstein1: weights sum to zero");
  }
}

// Sorted values with their cumulative normalised weights.
template <class = void>
inline void sorted_cdf(const std::vector<double>& x, const std::vector<double>* w, std::vector<double>& values,
                       std::vector<double>& cum) {
  std::vector<std::size_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  values.resize(x.size());
  cum.resize(x.size());
  double total = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    values[i] = x[idx[i]];
    total += w ? (*w)[idx[i]] : 1.0;
    cum[i] = total;
  }
  for (double& c : cum) c /= total;
}

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
template <class = void>
inline double wasserstein1_sorted(const double* u, std::size_t n, const double* v, std::size_t m) {
  if (n == 0 || m == 0) throw invalid_argument("wasserstein1_sorted: empty sample");
  if (n == m) return detail::l1_distance(u, v, n) / static_cast<double>(n);
  // Integrate |F_u - F_v| over the merged points; F jumps by 1/n resp. 1/m, counted exactly
  // as integers to avoid drift: |i/n - j/m| = |i m - j n| / (n m).
  const double nm = static_cast<double>(n) * static_cast<double>(m);
  std::size_t i = 0, j = 0;
  double x = std::min(u[0], v[0]), total = 0;
  while (i < n || j < m) {
    const double next = j >= m || (i < n && u[i] <= v[j]) ? u[i] : v[j];
    const double diff =
        std::abs(static_cast<double>(i) * static_cast<double>(m) - static_cast<double>(j) * static_cast<double>(n));
    total += diff * (next - x);
    x = next;
    while (i < n && u[i] == x) ++i;
    while (j < m && v[j] == x) ++j;
  }
  return total / nm;
}

/// Exact W1 between two (optionally weighted) sample sets.
template <class = void>
inline double wasserstein1(const std::vector<double>& u, const std::vector<double>& v,
                           const std::vector<double>* u_weights = nullptr,
                           const std::vector<double>* v_weights = nullptr) {
  detail::check_w1_sample(u, u_weights, "u");
  detail::check_w1_sample(v, v_weights, "v");
  if (!u_weights && !v_weights) {  // exact integer CDF steps, no accumulated weight rounding
    std::vector<double> a = u, b = v;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return wasserstein1_sorted(a.data(), a.size(), b.data(), b.size());
  }
  std::vector<double> us, uc, vs, vc;
  detail::sorted_cdf(u, u_weights, us, uc);
  detail::sorted_cdf(v, v_weights, vs, vc);
  // Walk the merged points; between consecutive points both CDFs are constant.
  std::size_t i = 0, j = 0;
  double fu = 0, fv = 0, x = std::min(us[0], vs[0]), total = 0;
  while (i < us.size() || j < vs.size()) {
    const double next = j >= vs.size() || (i < us.size() && us[i] <= vs[j]) ? us[i] : vs[j];
    total += std::abs(fu - fv) * (next - x);
    x = next;
    while (i < us.size() && us[i] == x) fu = uc[i++];
    while (j < vs.size() && vs[j] == x) fv = vc[j++];
  }
  return total;
}

/// W1 between two lognormal mixtures (numerical integration of |F_a - F_b|, see synopsis).
template <class = void>
inline double wasserstein1(const lognormal_mixture& a, const lognormal_mixture& b) {
  constexpr double tail = 1e-14;
  std::vector<double> cuts;
  for (const lognormal_mixture* m : {&a, &b}) {
    cuts.push_back(m->quantile(tail));
    cuts.push_back(m->quantile(1 - tail));
    for (const auto& c : m->components()) {
      if (c.is_point_mass()) {
        cuts.push_back(c.point);
        continue;
      }
      cuts.push_back(std::exp(c.mu));
      if (m->truncated()) {
        cuts.push_back(c.lo);
        cuts.push_back(c.hi);
      }
    }
  }
  const double lo = std::min(a.quantile(tail), b.quantile(tail));
  const double hi = std::max(a.quantile(1 - tail), b.quantile(1 - tail));
  std::vector<double> pts;
  for (double c : cuts)
    if (c >= lo && c <= hi && c > 0 && std::isfinite(c)) pts.push_back(c);
  std::sort(pts.begin(), pts.end());
  pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
  // x = e^t, dx = e^t dt; F is smooth between the breakpoints. |F_a - F_b| has a kink where
  // the CDFs cross, which Gauss-Kronrod's error estimate can misjudge (1e-6 relative errors
  // measured): crossings found by a sign scan and a root finder become breakpoints too.
  auto diff = [&](double t) {
    const double x = std::exp(t);
    return a.cdf(x) - b.cdf(x);
  };
  auto integrand = [&](double t) { return std::abs(diff(t)) * std::exp(t); };
  std::vector<double> ts;
  for (double p : pts) ts.push_back(std::log(p));
  const std::size_t cuts_before = ts.size();
  for (std::size_t k = 0; k + 1 < cuts_before; ++k) {
    constexpr int scan = 32;
    double t_prev = ts[k], d_prev = diff(t_prev);
    for (int i = 1; i <= scan; ++i) {
      const double t = ts[k] + (ts[k + 1] - ts[k]) * static_cast<double>(i) / scan, d = diff(t);
      if ((d_prev < 0 && d > 0) || (d_prev > 0 && d < 0)) {
        const auto r = detail::bracketed_root(diff, t_prev, t, d_prev, d, 50, 100);
        ts.push_back(0.5 * (r.lo + r.hi));
      }
      t_prev = t;
      d_prev = d;
    }
  }
  std::sort(ts.begin(), ts.end());
  double total = 0;
  for (std::size_t k = 0; k + 1 < ts.size(); ++k) {
    const double t0 = ts[k], t1 = ts[k + 1];
    if (!(t1 > t0)) continue;
    total += detail::gauss_kronrod15(integrand, t0, t1, 15, 1e-11);
  }
  return total;
}

enum class cdf_rule { step, trapezoid };
/// Number of cdf_rule values (they are 0 .. cdf_rule_count - 1).
inline constexpr std::size_t cdf_rule_count = 2;

/// W1 between two CDFs tabulated on the ascending grid x.
template <class = void>
inline double wasserstein1_cdf(const std::vector<double>& x, const std::vector<double>& f, const std::vector<double>& g,
                               cdf_rule rule = cdf_rule::trapezoid) {
  if (x.size() < 2) throw invalid_argument("wasserstein1_cdf: the grid needs at least 2 points");
  if (f.size() != x.size() || g.size() != x.size())
    throw invalid_argument("wasserstein1_cdf: CDF tables and grid differ in length");
  double total = 0;
  for (std::size_t i = 0; i + 1 < x.size(); ++i) {
    const double dx = x[i + 1] - x[i];
    if (!(dx >= 0) || !std::isfinite(dx)) throw invalid_argument("wasserstein1_cdf: grid not ascending or not finite");
    const double d0 = f[i] - g[i], d1 = f[i + 1] - g[i + 1];
    if (!std::isfinite(d0) || !std::isfinite(d1)) throw domain_error("wasserstein1_cdf: CDF values not finite");
    if (rule == cdf_rule::step) {
      total += std::abs(d0) * dx;
    } else if ((d0 >= 0) == (d1 >= 0)) {
      total += 0.5 * (std::abs(d0) + std::abs(d1)) * dx;
    } else {  // the difference crosses zero inside the cell: two triangles
      const double cross = d0 / (d0 - d1) * dx;
      total += 0.5 * (std::abs(d0) * cross + std::abs(d1) * (dx - cross));
    }
  }
  return total;
}

/// Q(u_k), u_k = (k + 1/2) / K, of a mixture (quantile_grid.hpp; build the grid once and use
/// its overload when many vectors share one K).
template <class = void>
inline std::vector<double> quantile_vector(const lognormal_mixture& m, std::size_t k = 256) {
  if (k == 0) throw invalid_argument("quantile_vector: K must be >= 1");
  return quantile_vector(m, quantile_grid(k));
}

/// Exact W1 between two untruncated lognormals (either may be a point mass > 0), see synopsis.
inline double wasserstein1(const lognormal_component& a, const lognormal_component& b) {
  auto log_location = [](const lognormal_component& c) {
    if (!c.is_point_mass()) return c.mu;
    if (!(c.point > 0)) throw domain_error("wasserstein1: a point mass must be > 0 for the lognormal closed form");
    return std::log(c.point);
  };
  const double ma = log_location(a), mb = log_location(b), sa = a.sigma, sb = b.sigma;
  const double ea = std::exp(ma + 0.5 * sa * sa), eb = std::exp(mb + 0.5 * sb * sb);  // the means
  if (sa == sb) return std::abs(ea - eb);
  const double zs = (mb - ma) / (sa - sb);  // Q_a = Q_b here
  // Partial expectations below z*: E[e^(m + s Z); Z < z*] = e^(m + s^2/2) Phi(z* - s).
  const double below = ea * detail::normal_cdf(zs - sa) - eb * detail::normal_cdf(zs - sb);
  const double above = ea * detail::normal_cdf(sa - zs) - eb * detail::normal_cdf(sb - zs);
  return std::abs(below) + std::abs(above);
}

/// Q(u_k), u_k = (k + 1/2) / K, of an ascending sorted sample, Q the empirical quantile
/// function (inverted CDF: the exact quantile function of the sample's distribution).
inline std::vector<double> quantile_vector_sorted(const double* x, std::size_t n, std::size_t k = 256) {
  if (k == 0) throw invalid_argument("quantile_vector: K must be >= 1");
  std::vector<double> q(k);
  for (std::size_t i = 0; i < k; ++i)
    q[i] =
        quantile_sorted(x, n, (static_cast<double>(i) + 0.5) / static_cast<double>(k), quantile_method::inverted_cdf);
  return q;
}

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
