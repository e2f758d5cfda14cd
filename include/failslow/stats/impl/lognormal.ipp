// failslow/stats/impl/lognormal.ipp -- the definitions of stats/lognormal.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/detail/bracketed_root.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/summary.hpp"

namespace failslow::stats {

FAILSLOW_FUNC_DEF lognormal_component reconstruct_lognormal(const cluster_summary& c) {
  if (c.count == 0) throw invalid_argument("reconstruct_lognormal: empty cluster");
  lognormal_component out;
  out.lo = c.min;
  out.hi = c.max;
  out.point = c.p50;
  if (!(c.p50 > 0) || !(c.p99 > c.p50)) {
    out.sigma = 0;
    out.mu = c.p50 > 0 ? std::log(c.p50) : -std::numeric_limits<double>::infinity();
    return out;
  }
  out.mu = std::log(c.p50);
  out.sigma = (std::log(c.p99) - out.mu) / z_099;
  return out;
}

FAILSLOW_FUNC_DEF lognormal_component log_uniform_piece(double lo, double hi, double weight) {
  lognormal_component out;
  out.weight = weight;
  if (!(hi > 0)) {  // nothing positive: a point mass at hi
    out.point = hi;
    out.mu = -std::numeric_limits<double>::infinity();
    out.lo = out.hi = hi;
    return out;
  }
  if (!(lo > 0)) lo = hi * 1e-6;
  out.lo = lo;
  out.hi = hi;
  out.point = hi;
  const double a = std::log(lo), b = std::log(hi);
  if (!(b > a)) {
    out.mu = b;
    return out;  // sigma 0: a point mass at hi
  }
  out.mu = 0.5 * (a + b);
  out.sigma = 1000 * (b - a);
  return out;
}

FAILSLOW_FUNC_DEF std::vector<lognormal_component> reconstruct_cluster(const cluster_summary& c,
                                                                       cluster_shape* chosen) {
  const lognormal_component base = reconstruct_lognormal(c);  // validates; point mass or p99 fit
  auto pick = [&](cluster_shape s) {
    if (chosen) *chosen = s;
  };
  if (base.is_point_mass() || !(c.min > 0) || !(c.max > c.min) || c.count < 2) {
    pick(base.is_point_mass() ? cluster_shape::point : cluster_shape::lognormal_p99);
    return {base};
  }
  const double mean = c.mean > 0 ? c.mean : c.p50, sd = std::sqrt(std::max(0.0, c.variance));
  const double l90 = c.p90 > c.p50 ? std::log(c.p90 / c.p50) : 0.0, l99 = std::log(c.p99 / c.p50);
  const double sigmas[] = {base.sigma, l90 / z_090, (z_090 * l90 + z_099 * l99) / (z_090 * z_090 + z_099 * z_099),
                           c.mean > 0 ? std::sqrt(std::log1p(c.variance / (c.mean * c.mean))) : 0.0};
  const cluster_shape shapes[] = {cluster_shape::lognormal_p99, cluster_shape::lognormal_p90,
                                  cluster_shape::lognormal_fit, cluster_shape::lognormal_moments};
  double best = std::numeric_limits<double>::infinity();
  lognormal_component out = base;
  for (int i = 0; i < 4; ++i) {
    const double s = sigmas[i];
    if (!(s > 0) || !std::isfinite(s)) continue;
    const double m = std::exp(base.mu + 0.5 * s * s);
    const double score =
        (std::abs(std::exp(base.mu + s * z_090) - c.p90) + std::abs(std::exp(base.mu + s * z_099) - c.p99) +
         std::abs(m - mean) + std::abs(m * std::sqrt(std::expm1(s * s)) - sd)) /
        mean;
    if (score < best) {
      best = score;
      out.sigma = s;
      pick(shapes[i]);
    }
  }
  // The piecewise CDF through the stored quantiles.
  const double xs[] = {c.min, std::clamp(c.p50, c.min, c.max), std::clamp(c.p90, c.min, c.max),
                       std::clamp(c.p99, c.min, c.max), c.max};
  const double ps[] = {0, 0.5, 0.9, 0.99, 1};
  double m1 = 0, m2 = 0;
  for (int i = 0; i < 4; ++i) {
    const double a = xs[i], b = xs[i + 1], w = ps[i + 1] - ps[i];
    if (b > a) {
      const double l = std::log(b / a);
      m1 += w * (b - a) / l;
      m2 += w * (b * b - a * a) / (2 * l);
    } else {
      m1 += w * a;
      m2 += w * a * a;
    }
  }
  const double pw_sd = std::sqrt(std::max(0.0, m2 - m1 * m1) * static_cast<double>(c.count) /
                                 static_cast<double>(c.count - 1));  // as the stored (ddof 1) sd
  if ((std::abs(m1 - mean) + std::abs(pw_sd - sd)) / mean < best) {
    pick(cluster_shape::piecewise);
    std::vector<lognormal_component> pieces;
    for (int i = 0; i < 4; ++i)
      if (ps[i + 1] > ps[i]) pieces.push_back(log_uniform_piece(xs[i], xs[i + 1], ps[i + 1] - ps[i]));
    return pieces;
  }
  return {out};
}

FAILSLOW_FUNC_DEF lognormal_mixture::lognormal_mixture(std::vector<lognormal_component> components, bool truncated)
    : components_(std::move(components)), truncated_(truncated) {
  if (components_.empty()) throw invalid_argument("lognormal_mixture: no component");
  double total = 0;
  for (const auto& c : components_) {
    if (!(c.weight >= 0) || !std::isfinite(c.weight)) throw invalid_argument("lognormal_mixture: bad weight");
    total += c.weight;
  }
  if (!(total > 0)) throw invalid_argument("lognormal_mixture: weights sum to zero");
  for (auto& c : components_) {
    c.weight /= total;
    bounds_.push_back({c.cdf(c.lo), c.cdf(c.hi)});  // once, not per cdf() call
  }
}

FAILSLOW_FUNC_DEF lognormal_mixture lognormal_mixture::from_summary(const distribution_summary& s, bool truncated) {
  std::vector<lognormal_component> comps;
  const double n = static_cast<double>(s.count());
  for (const auto& c : s.clusters) {
    if (!c.count) continue;
    lognormal_component comp = reconstruct_lognormal(c);
    comp.weight = static_cast<double>(c.count) / n;
    comps.push_back(comp);
  }
  return lognormal_mixture(std::move(comps), truncated);
}

FAILSLOW_FUNC_DEF double lognormal_mixture::cdf(double x) const {
  check_nonempty();
  double f = 0;
  for (std::size_t i = 0; i < components_.size(); ++i) {
    const auto& c = components_[i];
    f += c.weight * (truncated_ ? c.truncated_cdf(x, bounds_[i].first, bounds_[i].second) : c.cdf(x));
  }
  return std::min(1.0, f);
}

FAILSLOW_FUNC_DEF double lognormal_mixture::survival(double x) const {
  check_nonempty();
  double q = 0;
  for (const auto& c : components_) q += c.weight * (truncated_ ? c.truncated_survival(x) : c.survival(x));
  return std::min(1.0, q);
}

FAILSLOW_FUNC_DEF double lognormal_mixture::quantile(double p) const {
  check_nonempty();
  if (!(p >= 0 && p <= 1)) throw domain_error("lognormal_mixture: probability outside [0, 1]");
  // Bracket: every component's own quantile at p (clipped to its support when truncated).
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& c : components_) {
    double q = component_quantile(c, p);
    lo = std::min(lo, q);
    hi = std::max(hi, q);
  }
  if (p <= 0) return lo;
  if (p >= 1 || lo == hi || !std::isfinite(hi)) return p >= 1 ? hi : lo;
  // Point masses inside the bracket can be the answer exactly (F jumps over p there).
  for (const auto& c : components_) {
    if (!c.is_point_mass() || c.point < lo || c.point > hi) continue;
    if (cdf(c.point) >= p && cdf(std::nextafter(c.point, 0.0)) < p) return c.point;
  }
  if (cdf(lo) >= p) return lo;
  // F(lo) < p <= F(hi): Brent's method on t = ln x, solving F = p below the median and S = 1 - p
  // above it, so both tails keep their relative precision.
  const double tlo = std::log(std::max(lo, std::numeric_limits<double>::min()));
  const double thi = std::log(hi);
  const double q = 1 - p;  // exact for p in [0.5, 1]
  auto gx = [&](double x) { return p <= 0.5 ? cdf(x) - p : q - survival(x); };
  auto g = [&](double t) { return gx(std::exp(t)); };
  // In the far tails (p = 1 - 1e-14) the bracket's ends can miss p by a rounding error
  // (F(hi) = p - 4e-17 measured): the end that reaches p up to rounding is the answer.
  const double g_lo = g(tlo), g_hi = g(thi);
  if (g_lo >= 0) return lo;
  if (!(g_hi > 0)) return hi;
  const auto r = detail::bracketed_root(g, tlo, thi, g_lo, g_hi, 52, 200);
  // The smallest x with F(x) >= p: the upper end of the final bracket, unless a point mass
  // or a truncation bound below it already reaches p (F is flat or jumps there, and the
  // root finder can land anywhere on a flat stretch).
  double x = std::exp(g(r.lo) >= 0 ? r.lo : r.hi);
  for (const auto& c : components_) {
    for (double edge : {c.point, c.lo, c.hi}) {
      if (!(edge < x) || !(edge > 0) || (!c.is_point_mass() && !truncated_)) continue;
      if (c.is_point_mass() && edge != c.point) continue;
      if (gx(edge) >= 0) x = edge;
    }
  }
  return x;
}

FAILSLOW_FUNC_DEF double lognormal_mixture::component_quantile(const lognormal_component& c, double p) const {
  if (c.is_point_mass()) return c.point;
  if (!truncated_) return c.quantile(p);
  const double a = c.cdf(c.lo), b = c.cdf(c.hi);
  if (!(b > a) || p <= 0) return c.lo;
  if (p >= 1) return c.hi;  // exactly, not through a CDF round trip
  return std::clamp(c.quantile(a + p * (b - a)), c.lo, c.hi);
}

}  // namespace failslow::stats
