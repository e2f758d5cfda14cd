// failslow/stats/impl/quantile_grid.ipp -- the definitions of stats/quantile_grid.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <limits>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/detail/normal_quantile.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/quantile_grid.hpp"

namespace failslow::stats {

namespace detail {

FAILSLOW_FUNC_DEF component_cdf::component_cdf(const lognormal_component& c, bool truncated)
    : weight(c.weight),
      mu(c.mu),
      sigma(c.sigma),
      tlo(-std::numeric_limits<double>::infinity()),
      thi(std::numeric_limits<double>::infinity()),
      flo(0),
      fspan(1),
      point(c.is_point_mass()),
      trunc(truncated && !c.is_point_mass()) {
  if (point) {
    tlo = thi = c.point > 0 ? std::log(c.point) : -std::numeric_limits<double>::infinity();
    return;
  }
  if (trunc) {
    tlo = c.lo > 0 ? std::log(c.lo) : -std::numeric_limits<double>::infinity();
    thi = std::log(c.hi);
    flo = normal_cdf((tlo - mu) / sigma);
    fspan = normal_cdf((thi - mu) / sigma) - flo;
  }
}

FAILSLOW_FUNC_DEF double component_cdf::cdf(double t, bool strict, double phi) const noexcept {
  if (point) return (strict ? t > tlo : t >= tlo) ? weight : 0.0;
  // Outside its support a truncated component is 0 or its weight: no erfc there (a mixture
  // of disjoint clusters or log-uniform pieces then costs one erfc per node, not one per
  // node and component).
  if (trunc) {
    if (t < tlo) return 0.0;
    if (t >= thi || !(fspan > 0)) return weight;
  }
  if (phi < 0) {
    const double z = (t - mu) / sigma;
    // Beyond 8.3 sigma Phi is 0 or 1 to double precision: no erfc for far components.
    phi = z < -8.3 ? (trunc ? flo : 0.0) : z > 8.3 ? 1.0 : normal_cdf(z);
  }
  if (!trunc) return weight * phi;
  return weight * std::clamp((phi - flo) / fspan, 0.0, 1.0);
}

FAILSLOW_FUNC_DEF quantile_node* component_cdf::grid_nodes(const quantile_grid& grid, std::size_t first,
                                                           std::size_t last, std::size_t self,
                                                           quantile_node* p) const noexcept {
  constexpr std::size_t refined = 8;
  const auto& z = grid.z();
  const auto& u = grid.u();
  for (std::size_t k = first; k < last; ++k) {
    *p++ = {mu + sigma * z[k], 0, u[k], self};
    if (k + 1 < last && (k < refined || k + 1 + refined >= z.size()))
      *p++ = {mu + sigma * 0.5 * (z[k] + z[k + 1]), 0, -1, self};
  }
  return p;
}

FAILSLOW_FUNC_DEF std::size_t component_cdf::nodes(const quantile_grid& grid, std::size_t self,
                                                   std::vector<quantile_node>& out) const {
  if (out.size() < max_nodes(grid)) out.resize(max_nodes(grid));
  quantile_node* const begin = out.data();
  quantile_node* p = begin;
  if (point) {  // F(t-) and F(t): the jump
    *p++ = {tlo, 0, -1, self};
    *p++ = {tlo, 0, -1, self};
    return 2;
  }
  const auto& z = grid.z();
  if (!trunc) {
    // Tail nodes beyond both ends of the grid, so that every u_k is bracketed and a flat
    // stretch between two components is not bridged in one step.
    constexpr double pads[] = {4.0, 2.0, 1.0, 0.5};
    for (double pad : pads) *p++ = {mu + sigma * (z.front() - pad), 0, -1, self};
    p = grid_nodes(grid, 0, z.size(), self, p);
    for (auto it = std::rbegin(pads); it != std::rend(pads); ++it) *p++ = {mu + sigma * (z.back() + *it), 0, -1, self};
    return static_cast<std::size_t>(p - begin);
  }
  // Truncated to [lo, hi]: both bounds, the grid points inside, and, when the support holds
  // few of them (a narrow cluster), points uniform in t between the bounds as well.
  const double lo = std::isfinite(tlo) ? tlo : mu - 40 * sigma;
  const double zlo = (lo - mu) / sigma, zhi = (thi - mu) / sigma;
  const auto first = static_cast<std::size_t>(std::upper_bound(z.begin(), z.end(), zlo) - z.begin());
  const auto last = static_cast<std::size_t>(std::lower_bound(z.begin(), z.end(), zhi) - z.begin());
  *p++ = {lo, 0, -1, self};
  if (2 * (last > first ? last - first : 0) >= z.size()) {
    p = grid_nodes(grid, first, last, self, p);
  } else {
    const std::size_t n = grid.size() + 1;
    for (std::size_t i = 1; i < n; ++i)
      *p++ = {lo + (thi - lo) * static_cast<double>(i) / static_cast<double>(n), 0, -1, self};
  }
  *p++ = {thi, 0, -1, self};
  return static_cast<std::size_t>(p - begin);
}

}  // namespace detail

FAILSLOW_FUNC_DEF void quantile_vector(const lognormal_mixture& m, const quantile_grid& grid, double* out) {
  const auto& comps = m.components();
  if (comps.empty()) throw invalid_argument("lognormal_mixture: no component");
  const std::size_t k = grid.size();
  if (comps.size() == 1 && (comps[0].is_point_mass() || !m.truncated())) {
    const auto& c = comps[0];
    if (c.is_point_mass()) {
      std::fill(out, out + k, c.point);
    } else {
      const auto& z = grid.z();
      for (std::size_t i = 0; i < k; ++i) out[i] = std::exp(c.mu + c.sigma * z[i]);
    }
    return;
  }
  thread_local std::vector<detail::component_cdf> parts;
  parts.clear();
  for (const auto& c : comps) parts.emplace_back(c, m.truncated());
  // Merge every component's nodes in order, then F at each node.
  // Scratch reused across calls on one thread: building a vector then allocates nothing.
  thread_local std::vector<detail::quantile_node> nodes, own, merged;
  nodes.clear();
  for (std::size_t c = 0; c < parts.size(); ++c) {
    // Count first: nodes() may grow `own`, so its begin() is read only after the call.
    const auto own_count = static_cast<std::ptrdiff_t>(parts[c].nodes(grid, c, own));
    const auto own_end = own.begin() + own_count;
    if (nodes.empty() || own_end == own.begin() || !(own.front().t < nodes.back().t)) {
      // Components in ascending order (clusters, pieces): what std::merge gives, without it.
      nodes.insert(nodes.end(), own.begin(), own_end);
      continue;
    }
    merged.resize(nodes.size() + static_cast<std::size_t>(own_end - own.begin()));
    std::merge(nodes.begin(), nodes.end(), own.begin(), own_end, merged.begin(),
               [](const detail::quantile_node& a, const detail::quantile_node& b) { return a.t < b.t; });
    nodes.swap(merged);
  }
  // F at node t is the sum over components in their order. When every component is truncated
  // (or a point mass) with non-negative weight and their bounds ascend, those wholly below t
  // are a prefix (their weights' running sum, taken in the same order) and those wholly above
  // are a suffix (they add 0): only the components between are evaluated, O(1) per node for
  // disjoint clusters instead of O(components), with the same sum bit for bit.
  thread_local std::vector<double> below;  // below[c]: ((0 + w_0) + w_1) + ... + w_(c-1)
  bool ordered = true;
  below.assign(1, 0.0);
  for (std::size_t c = 0; c < parts.size() && ordered; ++c) {
    const auto& p = parts[c];
    ordered = (p.trunc || p.point) && p.weight >= 0 && std::isfinite(p.weight) && p.tlo <= p.thi &&
              (c == 0 || (parts[c - 1].tlo <= p.tlo && parts[c - 1].thi <= p.thi));
    below.push_back(below.back() + p.weight);
  }
  double running = 0;                 // rounding must not make F decrease
  std::size_t full = 0, touched = 0;  // [0, full): t past thi; [touched, C): t below tlo
  double previous_t = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    // Of two nodes at one t (a point mass), the first carries F(t-), the second F(t).
    const bool strict = i + 1 < nodes.size() && nodes[i + 1].t == nodes[i].t;
    const auto& n = nodes[i];
    ordered = ordered && n.t >= previous_t;  // the bounds below move forward only
    previous_t = n.t;
    double f = 0;
    std::size_t c = 0, end = parts.size();
    if (ordered) {
      while (touched < parts.size() && !(parts[touched].tlo > n.t)) ++touched;
      while (full < touched && parts[full].thi < n.t) ++full;
      f = below[full];
      c = full;
      end = touched;
    }
    for (; c < end; ++c) f += parts[c].cdf(n.t, strict, c == n.owner ? n.own_phi : -1.0);
    nodes[i].f = running = std::max(running, std::min(1.0, f));
  }
  const auto& u = grid.u();
  std::size_t j = 0;  // first node with F >= u_k
  for (std::size_t i = 0; i < k; ++i) {
    while (j < nodes.size() && nodes[j].f < u[i]) ++j;
    if (j == 0)
      out[i] = std::exp(nodes.front().t);
    else if (j == nodes.size())
      out[i] = std::exp(nodes.back().t);
    else
      out[i] = detail::interpolate_t(nodes[j - 1], nodes[j], u[i]);
  }
}

FAILSLOW_FUNC_DEF quantile_grid::quantile_grid(std::size_t k) : u_(k), z_(k) {
  if (k == 0) throw invalid_argument("quantile_grid: K must be >= 1");
  for (std::size_t i = 0; i < k; ++i) u_[i] = (static_cast<double>(i) + 0.5) / static_cast<double>(k);
  // The lower half from the normal quantile, the upper half by symmetry (z_(K-1-i) = -z_i), so
  // both tails are equally precise.
  for (std::size_t i = 0; i < (k + 1) / 2; ++i) {
    z_[i] = 2 * i + 1 == k ? 0.0 : detail::normal_quantile(u_[i]);
    z_[k - 1 - i] = -z_[i];
  }
}

}  // namespace failslow::stats
