// failslow/stats/impl/wasserstein.ipp -- the definitions of stats/wasserstein.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/bracketed_root.hpp"
#include "failslow/stats/detail/gauss_kronrod.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/quantile_grid.hpp"
#include "failslow/stats/wasserstein.hpp"

namespace failslow::stats {

namespace detail {

FAILSLOW_FUNC_DEF void check_w1_sample(const std::vector<double>& x, const std::vector<double>* w, const char* which) {
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

}  // namespace detail

FAILSLOW_FUNC_DEF double wasserstein1_sorted(const double* u, std::size_t n, const double* v, std::size_t m) {
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

FAILSLOW_FUNC_DEF double wasserstein1(const std::vector<double>& u, const std::vector<double>& v,
                                      const std::vector<double>* u_weights, const std::vector<double>* v_weights) {
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

FAILSLOW_FUNC_DEF double wasserstein1(const lognormal_mixture& a, const lognormal_mixture& b) {
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

FAILSLOW_FUNC_DEF double wasserstein1_cdf(const std::vector<double>& x, const std::vector<double>& f,
                                          const std::vector<double>& g, cdf_rule rule) {
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

FAILSLOW_FUNC_DEF std::vector<double> quantile_vector(const lognormal_mixture& m, std::size_t k) {
  if (k == 0) throw invalid_argument("quantile_vector: K must be >= 1");
  return quantile_vector(m, quantile_grid(k));
}

FAILSLOW_FUNC_DEF double wasserstein1(const lognormal_component& a, const lognormal_component& b) {
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

FAILSLOW_FUNC_DEF std::vector<double> quantile_vector_sorted(const double* x, std::size_t n, std::size_t k) {
  if (k == 0) throw invalid_argument("quantile_vector: K must be >= 1");
  std::vector<double> q(k);
  for (std::size_t i = 0; i < k; ++i)
    q[i] =
        quantile_sorted(x, n, (static_cast<double>(i) + 0.5) / static_cast<double>(k), quantile_method::inverted_cdf);
  return q;
}

}  // namespace failslow::stats
