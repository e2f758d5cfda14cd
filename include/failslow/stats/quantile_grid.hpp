// failslow/stats/quantile_grid.hpp -- quantile vectors of reconstructed distributions, fast.
//
// Synopsis
//   W1 between summaries is taken in the quantile form (wasserstein.hpp):
//       W1(a, b) ~ mean_k |Q_a(u_k) - Q_b(u_k)|,   u_k = (k + 1/2) / K
//   so each summary is turned once into its vector Q(u_0..u_K-1) and every pair then costs one
//   L1 distance. This header makes that first step cheap, without root finding per point:
//     quantile_grid(K)        the shared grid: u_k and z_k = Phi^-1(u_k), computed once.
//     quantile_vector(m, grid, out)   Q_m(u_k) for a lognormal_mixture m (lognormal.hpp):
//       - one untruncated lognormal: exp(mu + sigma z_k), closed form;
//       - a point mass: the point;
//       - otherwise: nodes where each component's CDF is known in closed form (the grid's own
//         z_k for untruncated components, K + 1 points uniform in z over [lo, hi] for truncated
//         ones, both ends of every point mass), merged in order, the mixture CDF evaluated at
//         each node, and Q(u_k) interpolated between the two nodes that bracket u_k, linearly
//         in ln x (a lognormal's ln x is nearly linear in F on one node interval).
// Complexity: grid O(K) inverse normals once; a vector O(K) exps for one lognormal,
//   O(N C) for a mixture of C components with N ~ C (K + 1) nodes; O(N) and one erfc per node
//   when the components are truncated and ascend (clusters, knots' pieces and point masses as
//   compress/window_summary.hpp rebuilds them), the same bits as the O(N C) sum.
// Accuracy: the closed form to a few ulps. The interpolated form: ln Q within
//   ~(dz)^2 / 8 of exact on a node interval of width dz in z, i.e. relative errors in Q of
//   about 1e-5 at K = 256 (tests compare with the root-finding quantile); W1 of two vectors
//   within 0.1 % of the mean of the distributions of the exact integral (tests: scipy's quadrature
//   of |F_a - F_b|, and the Gauss-Kronrod integral of wasserstein.hpp, on realistic sigmas).
// Errors: K == 0 throws failslow::invalid_argument; an empty mixture throws (lognormal.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/stats/lognormal.hpp"

namespace failslow::stats {

/// The midpoints u_k = (k + 1/2) / K and their standard normal quantiles z_k.
class quantile_grid {
 public:
  FAILSLOW_FUNC explicit quantile_grid(std::size_t k = 256);

  std::size_t size() const noexcept { return u_.size(); }
  const std::vector<double>& u() const noexcept { return u_; }
  const std::vector<double>& z() const noexcept { return z_; }

 private:
  std::vector<double> u_, z_;
};

namespace detail {

// A node in t = ln x, where each component's CDF is a normal CDF of (t - mu) / sigma; no log is
// taken per node and interpolation costs one exp per quantile.
struct quantile_node {
  double t;           // ln x (-inf for a point mass at 0)
  double f;           // F of the mixture at t (F(t-) for the lower end of a point mass)
  double own_phi;     // Phi(z) of the owner's z at t when known exactly (a grid point), else -1
  std::size_t owner;  // the component that placed the node
};

// The component as the node evaluation needs it.
struct component_cdf {
  double weight, mu, sigma;
  double tlo, thi;    // ln of the truncation bounds (-inf, +inf when not truncated)
  double flo, fspan;  // Phi(zlo) and Phi(zhi) - Phi(zlo) for truncated components
  bool point, trunc;

  FAILSLOW_FUNC component_cdf(const lognormal_component& c, bool truncated);

  // This component's share of F at t; `strict` gives F(t-) (only a point mass jumps); phi is
  // Phi((t - mu) / sigma) when the caller knows it, else < 0.
  FAILSLOW_FUNC double cdf(double t, bool strict, double phi = -1) const noexcept;

  // Most nodes one component places on a grid of K points (nodes() writes at most this many).
  static std::size_t max_nodes(const quantile_grid& grid) noexcept { return grid.size() + 24; }

  // The grid points z_k, k in [first, last), with their known Phi; the outermost intervals,
  // where the grid is coarsest in z, get their midpoints as well (Phi computed).
  FAILSLOW_FUNC quantile_node* grid_nodes(const quantile_grid& grid, std::size_t first, std::size_t last,
                                          std::size_t self, quantile_node* p) const noexcept;

  // Nodes where the component's mass lies, ascending, into out[0, count); returns count. Nodes
  // at the grid's z_k carry their Phi(z_k) = u_k, so the component's own CDF there costs
  // nothing. `out` grows to max_nodes and keeps its size (a refill allocates and zeroes nothing).
  FAILSLOW_FUNC std::size_t nodes(const quantile_grid& grid, std::size_t self, std::vector<quantile_node>& out) const;
};

inline double interpolate_t(const quantile_node& a, const quantile_node& b, double u) noexcept {
  if (a.t == b.t || !(b.f > a.f) || !std::isfinite(a.t)) return std::exp(b.t);
  return std::exp(a.t + (u - a.f) / (b.f - a.f) * (b.t - a.t));
}

}  // namespace detail

/// Q_m(u_k) for k = 0..K-1 into out[0..K).
FAILSLOW_FUNC void quantile_vector(const lognormal_mixture& m, const quantile_grid& grid, double* out);

inline std::vector<double> quantile_vector(const lognormal_mixture& m, const quantile_grid& grid) {
  std::vector<double> q(grid.size());
  quantile_vector(m, grid, q.data());
  return q;
}

}  // namespace failslow::stats

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/impl/quantile_grid.ipp"
#endif
