// failslow/stats/lognormal.hpp -- lognormal reconstruction of summarised durations.
//
// Synopsis
//   From a cluster's p50 and p99 (summary.hpp) the cluster is modelled as lognormal with
//       mu = ln p50,   sigma = (ln p99 - ln p50) / z_0.99,   z_0.99 = Phi^-1(0.99) = 2.3263478740...
//   reconstruct_lognormal(summary) returns a `lognormal_component`; its distribution() is a
//   boost::math::lognormal_distribution<double>(mu, sigma), so the whole Boost API (pdf, cdf,
//   quantile, moments...) applies. sigma = 0 (p99 == p50) is a point mass at p50, which has no
//   Boost object; p50 <= 0 also becomes a point mass at p50.
//   lognormal_mixture: the clusters of a distribution_summary with weights w_c = n_c / n:
//       F(x) = sum_c w_c F_c(x),  F_c(x) = Phi((ln x - mu_c) / sigma_c)
//   optionally truncated: each component restricted to its cluster's [min, max] and
//   renormalised, F_c(x) = (G(clip(x)) - G(min)) / (G(max) - G(min)).
//   quantile(p) = inf { x : F(x) >= p }, by safeguarded root finding (TOMS 748) in log x,
//   bracketed by the component quantiles (a mixture quantile lies between them), with point
//   masses handled exactly; above the median it solves S(x) = 1 - p with the survival
//   function S = 1 - F (erfc), so upper-tail quantiles keep their relative precision.
// Complexity: cdf O(C); quantile O(C log(1/eps)) for C clusters.
// Accuracy: cdf to a few ulps per component (Boost erfc); quantile to ~4 ulps in x
//   (relative 1e-15) where F is continuous and strictly increasing.
// Errors: p outside [0, 1] throws failslow::domain_error; an empty mixture or a summary with no
//   values throws failslow::invalid_argument; negative quantiles (p99 < p50) cannot occur.
#pragma once

#include <algorithm>
#include <boost/math/distributions/lognormal.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/summary.hpp"

namespace failslow::stats {

namespace detail {
/// Phi(z), the standard normal CDF, with both tails accurate (erfc).
inline double normal_cdf(double z) noexcept { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
}  // namespace detail

/// Phi^-1(0.99).
inline constexpr double z_099 = 2.32634787404084110089;

/// One cluster as a lognormal (or a point mass), with its mixture weight and support bounds.
struct lognormal_component {
  double weight = 1;  ///< n_c / n
  double mu = 0;      ///< ln p50 (location of the point mass, in log, when sigma == 0)
  double sigma = 0;   ///< (ln p99 - ln p50) / z_0.99
  double point = 0;   ///< the value of a point mass (p50), used when sigma == 0
  double lo = 0, hi = std::numeric_limits<double>::infinity();  ///< truncation bounds (cluster min, max)

  bool is_point_mass() const noexcept { return sigma == 0; }

  /// The Boost distribution; throws failslow::domain_error for a point mass.
  boost::math::lognormal_distribution<double> distribution() const {
    if (is_point_mass()) throw domain_error("lognormal_component: a point mass has no lognormal distribution");
    return boost::math::lognormal_distribution<double>(mu, sigma);
  }

  /// Untruncated CDF.
  double cdf(double x) const noexcept {
    if (is_point_mass()) return x >= point ? 1.0 : 0.0;
    if (!(x > 0)) return 0.0;
    if (x == std::numeric_limits<double>::infinity()) return 1.0;
    return 0.5 * std::erfc(-(std::log(x) - mu) / (sigma * std::sqrt(2.0)));
  }

  /// 1 - cdf(x), computed directly so the upper tail keeps its relative precision.
  double survival(double x) const noexcept {
    if (is_point_mass()) return x >= point ? 0.0 : 1.0;
    if (!(x > 0)) return 1.0;
    if (x == std::numeric_limits<double>::infinity()) return 0.0;
    return 0.5 * std::erfc((std::log(x) - mu) / (sigma * std::sqrt(2.0)));
  }

  /// survival() of the truncated component.
  double truncated_survival(double x) const noexcept {
    if (is_point_mass()) return survival(x);
    if (x < lo) return 1.0;
    if (x >= hi) return 0.0;
    const double a = survival(lo), b = survival(hi);
    if (!(a > b)) return x >= lo ? 0.0 : 1.0;
    return (survival(x) - b) / (a - b);
  }

  /// CDF restricted to [lo, hi] and renormalised (point masses are unchanged).
  double truncated_cdf(double x) const noexcept {
    if (is_point_mass()) return cdf(x);
    if (x < lo) return 0.0;
    if (x >= hi) return 1.0;
    return truncated_cdf(x, cdf(lo), cdf(hi));
  }
  /// The same with cdf(lo) and cdf(hi) given, for callers that evaluate many points.
  double truncated_cdf(double x, double cdf_lo, double cdf_hi) const noexcept {
    if (is_point_mass()) return cdf(x);
    if (x < lo) return 0.0;
    if (x >= hi) return 1.0;
    if (!(cdf_hi > cdf_lo)) return 1.0;  // all mass at one end: behave as a point at lo
    return (cdf(x) - cdf_lo) / (cdf_hi - cdf_lo);
  }

  /// Untruncated quantile.
  double quantile(double p) const {
    if (is_point_mass()) return point;
    if (p <= 0) return 0.0;
    if (p >= 1) return std::numeric_limits<double>::infinity();
    const boost::math::normal_distribution<double> z;
    return std::exp(mu + sigma * boost::math::quantile(z, p));
  }
};

/// The reconstruction of one cluster (weight 1; lo/hi = its min/max).
inline lognormal_component reconstruct_lognormal(const cluster_summary& c) {
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

class lognormal_mixture {
 public:
  lognormal_mixture() = default;
  lognormal_mixture(std::vector<lognormal_component> components, bool truncated)
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

  /// The clusters of a summary, weights n_c / n (empty clusters dropped).
  static lognormal_mixture from_summary(const distribution_summary& s, bool truncated = false) {
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

  const std::vector<lognormal_component>& components() const noexcept { return components_; }
  bool truncated() const noexcept { return truncated_; }

  double cdf(double x) const {
    check_nonempty();
    double f = 0;
    for (std::size_t i = 0; i < components_.size(); ++i) {
      const auto& c = components_[i];
      f += c.weight * (truncated_ ? c.truncated_cdf(x, bounds_[i].first, bounds_[i].second) : c.cdf(x));
    }
    return std::min(1.0, f);
  }

  /// 1 - F(x), accurate in the upper tail.
  double survival(double x) const {
    check_nonempty();
    double q = 0;
    for (const auto& c : components_) q += c.weight * (truncated_ ? c.truncated_survival(x) : c.survival(x));
    return std::min(1.0, q);
  }

  /// inf { x : F(x) >= p }.
  double quantile(double p) const {
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
    // F(lo) < p <= F(hi): TOMS 748 on t = ln x, solving F = p below the median and S = 1 - p
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
    std::uintmax_t iterations = 200;
    const auto r = boost::math::tools::toms748_solve(g, tlo, thi, g_lo, g_hi,
                                                     boost::math::tools::eps_tolerance<double>(52), iterations);
    // The smallest x with F(x) >= p: the upper end of the final bracket, unless a point mass
    // or a truncation bound below it already reaches p (F is flat or jumps there, and the
    // root finder can land anywhere on a flat stretch).
    double x = std::exp(g(r.first) >= 0 ? r.first : r.second);
    for (const auto& c : components_) {
      for (double edge : {c.point, c.lo, c.hi}) {
        if (!(edge < x) || !(edge > 0) || (!c.is_point_mass() && !truncated_)) continue;
        if (c.is_point_mass() && edge != c.point) continue;
        if (gx(edge) >= 0) x = edge;
      }
    }
    return x;
  }

 private:
  void check_nonempty() const {
    if (components_.empty()) throw invalid_argument("lognormal_mixture: no component");
  }

  double component_quantile(const lognormal_component& c, double p) const {
    if (c.is_point_mass()) return c.point;
    if (!truncated_) return c.quantile(p);
    const double a = c.cdf(c.lo), b = c.cdf(c.hi);
    if (!(b > a) || p <= 0) return c.lo;
    if (p >= 1) return c.hi;  // exactly, not through a CDF round trip
    return std::clamp(c.quantile(a + p * (b - a)), c.lo, c.hi);
  }

  std::vector<lognormal_component> components_;
  std::vector<std::pair<double, double>> bounds_;  ///< untruncated cdf(lo), cdf(hi) per component
  bool truncated_ = false;
};

}  // namespace failslow::stats
