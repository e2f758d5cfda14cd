// failslow/stats/lognormal.hpp -- lognormal reconstruction of summarised durations.
//
// Synopsis
//   From a cluster's p50 and p99 (summary.hpp) the cluster is modelled as lognormal with
//       mu = ln p50,   sigma = (ln p99 - ln p50) / z_0.99,   z_0.99 = Phi^-1(0.99) = 2.3263478740...
//   reconstruct_lognormal(summary) returns a `lognormal_component` with cdf, survival, pdf,
//   quantile, mean and variance (a component's mu and sigma are those of
//   boost::math::lognormal_distribution(mu, sigma) or scipy.stats.lognorm(sigma, scale=e^mu) for
//   the rest of a distribution API). sigma = 0 (p99 == p50) is a point mass at p50; p50 <= 0 also
//   becomes a point mass at p50.
//   lognormal_mixture: the clusters of a distribution_summary with weights w_c = n_c / n:
//       F(x) = sum_c w_c F_c(x),  F_c(x) = Phi((ln x - mu_c) / sigma_c)
//   optionally truncated: each component restricted to its cluster's [min, max] and
//   renormalised, F_c(x) = (G(clip(x)) - G(min)) / (G(max) - G(min)).
//   reconstruct_cluster(summary) uses everything a cluster stores (count, min, max, mean,
//   variance, p50, p90, p99): a lognormal with sigma from p99, p90, both (least squares) or the
//   coefficient of variation, or a piecewise log-uniform CDF through min, p50, p90, p99 and max,
//   whichever predicts the stored statistics best (see its comment; window summaries rebuild
//   their clusters with it, compress/window_summary.hpp). log_uniform_piece(lo, hi, w) is a
//   component whose CDF rises linearly in ln x on [lo, hi] (a truncated lognormal of huge sigma).
//   quantile(p) = inf { x : F(x) >= p }, by safeguarded root finding (Brent) in log x,
//   bracketed by the component quantiles (a mixture quantile lies between them), with point
//   masses handled exactly; above the median it solves S(x) = 1 - p with the survival
//   function S = 1 - F (erfc), so upper-tail quantiles keep their relative precision.
// Complexity: cdf O(C); quantile O(C log(1/eps)) for C clusters.
// Accuracy: cdf to a few ulps per component (std::erfc); a component's quantile: the normal
//   quantile of stats/detail/normal_quantile.hpp (AS 241, ~3 ulps); the mixture quantile to
//   ~4 ulps in x (relative 1e-15) where F is continuous and strictly increasing.
// Errors: p outside [0, 1] throws failslow::domain_error; an empty mixture or a summary with no
//   values throws failslow::invalid_argument; negative quantiles (p99 < p50) cannot occur.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"
#include "failslow/stats/detail/normal_quantile.hpp"
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

  /// Untruncated density; throws failslow::domain_error for a point mass (it has none).
  double pdf(double x) const {
    if (is_point_mass()) throw domain_error("lognormal_component: a point mass has no density");
    if (!(x > 0) || std::isinf(x)) return 0.0;
    const double z = (std::log(x) - mu) / sigma;
    return std::exp(-0.5 * z * z) / (x * sigma * 2.50662827463100050242);  // sqrt(2 pi)
  }

  /// Untruncated mean e^(mu + sigma^2 / 2) (the point itself for a point mass).
  double mean() const noexcept { return is_point_mass() ? point : std::exp(mu + 0.5 * sigma * sigma); }

  /// Untruncated variance (e^(sigma^2) - 1) e^(2 mu + sigma^2) (0 for a point mass).
  double variance() const noexcept {
    return is_point_mass() ? 0.0 : std::expm1(sigma * sigma) * std::exp(2 * mu + sigma * sigma);
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
    return std::exp(mu + sigma * detail::normal_quantile(p));
  }
};

/// The reconstruction of one cluster (weight 1; lo/hi = its min/max).
FAILSLOW_FUNC lognormal_component reconstruct_lognormal(const cluster_summary& c);

/// Phi^-1(0.9).
inline constexpr double z_090 = 1.28155156554460081161;

/// A log-uniform piece on [lo, hi] (density proportional to 1 / x there) carrying `weight`: the
/// CDF rises linearly in ln x. It is a lognormal truncated to [lo, hi] with mu at the middle and
/// sigma = 1000 ln(hi / lo), so every mixture routine (and stats/quantile_grid.hpp) handles it
/// as it is: its density in ln x is flat to 1.3e-7 of itself. It means that only in a
/// truncated mixture. lo == hi (or lo <= 0 < hi taken as [hi 1e-6, hi]) degenerates gracefully:
/// a point mass at hi when lo == hi.
FAILSLOW_FUNC lognormal_component log_uniform_piece(double lo, double hi, double weight);

/// How a cluster was rebuilt by reconstruct_cluster.
enum class cluster_shape : std::uint8_t {
  point,              ///< all its values equal (or count 1): a point mass at p50
  lognormal_p99,      ///< lognormal, mu = ln p50, sigma from p99 (reconstruct_lognormal)
  lognormal_p90,      ///< sigma from p90: (ln p90 - ln p50) / z_0.9
  lognormal_fit,      ///< sigma by least squares on p90 and p99 in z: sum z ln(q/p50) / sum z^2
  lognormal_moments,  ///< sigma from the coefficient of variation, sqrt(ln(1 + var / mean^2))
  piecewise,          ///< log-uniform pieces through (0, min), (.5, p50), (.9, p90), (.99, p99), (1, max)
};
/// Number of cluster_shape values (they are 0 .. cluster_shape_count - 1).
inline constexpr std::size_t cluster_shape_count = 6;

/// The reconstruction of one cluster from everything it stores (count, min, max, mean,
/// variance, p50, p90, p99), chosen among the shapes of cluster_shape by which predicts the
/// stored statistics best: a lognormal candidate (mu = ln p50) scores
///     (|p90' - p90| + |p99' - p99| + |mean' - mean| + |sd' - sd|) / mean,
/// the piecewise CDF (which meets p50, p90 and p99 by construction) |mean' - mean| + |sd' - sd|
/// over mean, primes for the candidate's values (closed forms: exp(mu + sigma z),
/// exp(mu + sigma^2 / 2), mean sqrt(exp(sigma^2) - 1); the pieces' (b - a) / ln(b / a) and
/// (b^2 - a^2) / (2 ln(b / a))). Ties keep the first in the order above. The components are
/// truncated to [min, max] and weigh 1 in all (scale them); they mean the cluster only in a
/// truncated mixture. Measured on the battery of tests/test_summary_fidelity.cpp (W1 / mean):
/// see bench/README.md. Complexity O(1). Errors: an empty cluster throws invalid_argument.
FAILSLOW_FUNC std::vector<lognormal_component> reconstruct_cluster(const cluster_summary& c,
                                                                   cluster_shape* chosen = nullptr);

class lognormal_mixture {
 public:
  lognormal_mixture() = default;
  FAILSLOW_FUNC lognormal_mixture(std::vector<lognormal_component> components, bool truncated);

  /// The clusters of a summary, weights n_c / n (empty clusters dropped).
  FAILSLOW_FUNC static lognormal_mixture from_summary(const distribution_summary& s, bool truncated = false);

  const std::vector<lognormal_component>& components() const noexcept { return components_; }
  bool truncated() const noexcept { return truncated_; }

  FAILSLOW_FUNC double cdf(double x) const;

  /// 1 - F(x), accurate in the upper tail.
  FAILSLOW_FUNC double survival(double x) const;

  /// inf { x : F(x) >= p }.
  FAILSLOW_FUNC double quantile(double p) const;

 private:
  void check_nonempty() const {
    if (components_.empty()) throw invalid_argument("lognormal_mixture: no component");
  }

  FAILSLOW_FUNC double component_quantile(const lognormal_component& c, double p) const;

  std::vector<lognormal_component> components_;
  std::vector<std::pair<double, double>> bounds_;  ///< untruncated cdf(lo), cdf(hi) per component
  bool truncated_ = false;
};

}  // namespace failslow::stats

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/impl/lognormal.ipp"
#endif
