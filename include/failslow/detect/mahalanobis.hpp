// failslow/detect/mahalanobis.hpp -- KAT's inter-worker detector: which workers' feature
// vectors are far from the others', by Mahalanobis distance with an adaptive chi-square
// threshold.
//
// Synopsis
//   X: N workers x d features (an Eigen matrix or expression of any arithmetic scalar; the
//   computation is in double). Per worker
//        D^2_i = (x_i - mu)^T Sigma^-1 (x_i - mu)
//   with (mu, Sigma) estimated across the workers by
//     covariance_estimator::sample       mean and covariance (ddof 1; scipy/numpy's np.cov)
//     covariance_estimator::ledoit_wolf  (default) mean and the Ledoit & Wolf (2004) shrinkage
//                                        (1 - s) S + s (tr S / p) I of the MLE covariance S; well
//                                        conditioned for any N, also N <= d
//     covariance_estimator::mcd          minimum covariance determinant by FAST-MCD (Rousseeuw &
//                                        Van Driessen 1999): the h = ceil(mcd_support N) workers
//                                        (0.75 N by default: up to 25 % outliers; mcd_support = 0
//                                        takes the maximal breakdown h = floor((N + d + 1) / 2),
//                                        50 %, at the price of more false alarms on small
//                                        populations, see below) whose covariance has the smallest
//                                        determinant, scaled so the median D^2 is chi2_0.5(d), then
//                                        reweighted on the workers with D^2 <= chi2_0.975(d) and
//                                        scaled so their median D^2 is chi2_0.4875(d) (the median
//                                        of a chi-square truncated at 0.975; this corrects the
//                                        finite-sample shrinking without depending on how many
//                                        workers are outliers).
//                                        Robust to up to (N - h) / N contaminated workers, where the
//                                        others are masked by the outliers they pull the mean to.
//                                        Random starts from a caller-given seed, drawn with
//                                        core/detail/splitmix.hpp: the same on every standard library.
//   Features are first standardised (standardize = true): centred and divided by their sd
//   (sample, ledoit_wolf) or their 1.4826 MAD (mcd; the sd if the MAD is 0), so shrinkage towards
//   a multiple of I treats all features alike; the distances do not depend on the features'
//   units. Features that do not vary across the workers (sd <= 1e-12 max |x_j|) carry no
//   information and are dropped: the degrees of freedom are the number of features kept.
//   Eigenvalues of the (standardised) Sigma below eigen_floor times the largest are raised to it
//   (counted in floored_eigenvalues): a singular covariance (N <= d with `sample`, collinear
//   features, an MCD subset on a hyperplane) gives finite distances, not NaN.
//   Threshold on D (KAT):  lambda = sqrt(chi2_q(d)) * (1 + 1 / sqrt(N))  (outlier_threshold::
//   adaptive, q = 0.99), or sqrt(chi2_q(d)) (outlier_threshold::chi2). A worker is an outlier when
//   D > lambda. p-values: P(chi2_d > D^2) = Q(d/2, D^2/2), quantiles chi2_q(d) =
//   2 P^-1(d/2, q), from stats/detail/incomplete_gamma.hpp (relative 1e-13 against 40-digit
//   values; scipy.stats.chi2 agrees to 1e-12 in the tests).
//   False alarms on a clean normal population: with the sample covariance, the in-sample
//   N D^2 / (N - 1)^2 follows Beta(d/2, (N - d - 1)/2) exactly, so the per-worker false-alarm
//   rate is computable: in_sample_false_alarm_rate(N, d, lambda). It is below 1 - q for the
//   adaptive threshold with q = 0.99 (scipy.stats.beta: N = 50, d = 4: 0.00039; N = 200, d = 12:
//   0.0016; N = 1000, d = 12: 0.0053; N = 10^4, d = 12: 0.0084), and tends to 1 - q as N grows.
//   Ledoit-Wolf is close to it. MCD scores most workers out-of-sample against a covariance from
//   fewer of them, so its rate is higher on small populations (seeded simulation, correlated
//   normal features, adaptive threshold, default mcd_support 0.75): N = 40, d = 5: 6.2 %;
//   N = 100, d = 12: 5.3 %; N = 200, d = 12: 1.4 %; N = 1000, d = 12: 0.72 %; N = 500, d = 3:
//   0.71 % (with the maximal breakdown h: 19 %, 13 %, 2.1 %, 0.75 %, 0.79 %). Use mcd for
//   N >= ~20 d, where a cluster of slow workers would otherwise mask itself.
// Complexity: sample / ledoit_wolf O(N d^2 + d^3); mcd O(starts * 600 d^2 + 10 * steps * N d^2)
//   (starts are refined on a subsample of at most 600 workers). Memory O(N d).
// Errors: N < 2 or d < 1 throw failslow::invalid_argument; NaN/Inf in X throws
//   failslow::domain_error; quantile outside (0, 1), eigen_floor outside [0, 1), mcd_support
//   outside [0, 1] or mcd_starts 0 throw failslow::invalid_argument. When every feature is
//   constant the distances are 0, the p-values 1 and no worker is flagged.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/incomplete_beta.hpp"
#include "failslow/stats/detail/incomplete_gamma.hpp"

namespace failslow::detect {

enum class covariance_estimator : std::uint8_t { sample, ledoit_wolf, mcd };
/// Number of covariance_estimator values (they are 0 .. covariance_estimator_count - 1).
inline constexpr std::size_t covariance_estimator_count = 3;

enum class outlier_threshold : std::uint8_t {
  adaptive,  ///< sqrt(chi2_q(d)) (1 + 1/sqrt(N)), KAT's
  chi2,      ///< sqrt(chi2_q(d))
};
/// Number of outlier_threshold values (they are 0 .. outlier_threshold_count - 1).
inline constexpr std::size_t outlier_threshold_count = 2;

struct mahalanobis_options {
  covariance_estimator estimator = covariance_estimator::ledoit_wolf;
  double quantile = 0.99;  ///< q of the threshold
  outlier_threshold threshold = outlier_threshold::adaptive;
  bool standardize = true;
  double eigen_floor = 1e-10;  ///< relative floor of the covariance eigenvalues
  double mcd_support = 0.75;   ///< h / N for mcd; 0: floor((N + d + 1) / 2) / N (maximal breakdown)
  std::size_t mcd_starts = 100;
  std::uint64_t mcd_seed = 0x243f6a8885a308d3ull;
  bool mcd_reweight = true;
};

/// The reference distribution: D^2(x) = || whitening (x[features] - location) ||^2.
struct mahalanobis_model {
  Eigen::VectorXd location;                     ///< mean (robust for mcd), original units
  Eigen::MatrixXd covariance;                   ///< the (regularised) covariance used, original units
  Eigen::MatrixXd whitening;                    ///< dof x dof
  std::vector<Eigen::Index> features;           ///< columns of X used
  std::vector<Eigen::Index> constant_features;  ///< columns dropped (no variation)
  Eigen::Index workers = 0;                     ///< N the model was fitted on
  double shrinkage = 0.0;                       ///< Ledoit-Wolf intensity (0 for sample and mcd)
  std::size_t floored_eigenvalues = 0;
  std::vector<char> support;  ///< workers that formed the estimate (all but mcd's outliers)

  Eigen::Index dof() const noexcept { return static_cast<Eigen::Index>(features.size()); }

  /// Squared distances of the rows of x (same columns as the X fitted) to the model.
  template <class Derived>
  Eigen::VectorXd squared_distances(const Eigen::MatrixBase<Derived>& x) const {
    const Eigen::MatrixXd xd = x.template cast<double>();
    Eigen::VectorXd d2 = Eigen::VectorXd::Zero(xd.rows());
    if (features.empty()) return d2;
    Eigen::MatrixXd c(xd.rows(), dof());
    for (Eigen::Index j = 0; j < dof(); ++j)
      c.col(j) = xd.col(features[static_cast<std::size_t>(j)]).array() - location(j);
    d2 = (c * whitening.transpose()).rowwise().squaredNorm();
    return d2;
  }
};

// The functions below are templates on Real (always double, never given) so that nothing is
// compiled into a translation unit that includes this header and does not call them.

/// chi2_q(dof), the q-quantile of a chi-square distribution.
template <class Real = double>
double chi2_quantile(double dof, double q) {
  if (!(dof > 0.0)) throw invalid_argument("chi2_quantile: dof must be > 0");
  if (!(q > 0.0 && q < 1.0)) throw invalid_argument("chi2_quantile: q must be in (0, 1)");
  return stats::detail::chi_squared_quantile(static_cast<Real>(dof), q);
}

/// P(chi2_dof > x).
template <class Real = double>
double chi2_sf(double dof, double x) {
  if (!(dof > 0.0)) throw invalid_argument("chi2_sf: dof must be > 0");
  if (!(x > 0.0)) return 1.0;
  if (std::isinf(x)) return 0.0;
  return stats::detail::gamma_q(static_cast<Real>(dof) / 2, x / 2);
}

/// The outlier threshold on D for dof features and n workers.
template <class Real = double>
double mahalanobis_threshold(Eigen::Index dof, Eigen::Index n, double quantile = 0.99,
                             outlier_threshold rule = outlier_threshold::adaptive) {
  if (dof <= 0) return std::numeric_limits<double>::infinity();
  if (n < 1) throw invalid_argument("mahalanobis_threshold: n must be >= 1");
  const double base = std::sqrt(chi2_quantile<Real>(static_cast<double>(dof), quantile));
  return rule == outlier_threshold::adaptive ? base * (1.0 + 1.0 / std::sqrt(static_cast<double>(n))) : base;
}

/// Exact probability that a worker of a clean normal population of n exceeds `threshold` (on D)
/// when scored against the sample mean and covariance (ddof 1) of the n workers including itself:
/// P(Beta(d/2, (n-d-1)/2) > threshold^2 n / (n-1)^2). Needs n > d + 1.
template <class Real = double>
double in_sample_false_alarm_rate(Eigen::Index n, Eigen::Index d, double threshold) {
  if (d < 1 || n <= d + 1) throw invalid_argument("in_sample_false_alarm_rate: needs n > d + 1 >= 2");
  const double nd = static_cast<double>(n);
  const double b = threshold * threshold * nd / ((nd - 1.0) * (nd - 1.0));
  if (b >= 1.0) return 0.0;
  return stats::detail::beta_upper(static_cast<Real>(d) / 2, (nd - static_cast<double>(d) - 1.0) / 2, b);
}

namespace detail {

inline void check_mahalanobis_options(const mahalanobis_options& o) {
  if (!(o.quantile > 0.0 && o.quantile < 1.0)) throw invalid_argument("mahalanobis: quantile must be in (0, 1)");
  if (!(o.eigen_floor >= 0.0 && o.eigen_floor < 1.0))
    throw invalid_argument("mahalanobis: eigen_floor must be in [0, 1)");
  if (!(o.mcd_support >= 0.0 && o.mcd_support <= 1.0))
    throw invalid_argument("mahalanobis: mcd_support must be in [0, 1]");
  if (o.mcd_starts == 0) throw invalid_argument("mahalanobis: mcd_starts must be >= 1");
}

}  // namespace detail

namespace detail {

/// fit_mahalanobis on a matrix of doubles: the one body behind the template (detect/impl/
/// mahalanobis.ipp), compiled once in the separately compiled mode.
FAILSLOW_FUNC mahalanobis_model fit_mahalanobis_double(const Eigen::MatrixXd& x, const mahalanobis_options& o);

}  // namespace detail

/// Fits the reference distribution of the rows of x (see the synopsis).
template <class Derived>
mahalanobis_model fit_mahalanobis(const Eigen::MatrixBase<Derived>& x, const mahalanobis_options& o = {}) {
  return detail::fit_mahalanobis_double(x.template cast<double>(), o);  // no copy when x is a MatrixXd
}

/// Distances, p-values and the outlier workers of one population.
struct outlier_report {
  Eigen::VectorXd d2;                  ///< squared distances, one per worker
  Eigen::VectorXd distance;            ///< sqrt(d2)
  Eigen::VectorXd p_value;             ///< P(chi2_dof > d2); 1 when dof = 0
  std::vector<Eigen::Index> outliers;  ///< workers with distance > threshold, ascending
  double threshold = 0.0;              ///< on the distance D
  mahalanobis_model model;
};

/// Scores each worker (row) of x against the population of all workers (see the synopsis).
template <class Derived>
outlier_report detect_outlier_workers(const Eigen::MatrixBase<Derived>& x, const mahalanobis_options& o = {}) {
  outlier_report r;
  r.model = fit_mahalanobis(x, o);
  r.d2 = r.model.squared_distances(x);
  r.distance = r.d2.cwiseSqrt();
  const Eigen::Index n = x.rows(), p = r.model.dof();
  r.threshold = mahalanobis_threshold(p, n, o.quantile, o.threshold);
  r.p_value.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    r.p_value(i) = p > 0 ? chi2_sf(static_cast<double>(p), r.d2(i)) : 1.0;
    if (r.distance(i) > r.threshold) r.outliers.push_back(i);
  }
  return r;
}

#ifdef FAILSLOW_SEPARATE_COMPILATION
// Separately compiled mode (README, "Compile times"): instantiated once in src/failslow.cpp
// (target failslow::compiled), declared here so that no user translation unit instantiates them.
extern template double chi2_quantile<double>(double, double);
extern template double chi2_sf<double>(double, double);
extern template double mahalanobis_threshold<double>(Eigen::Index, Eigen::Index, double, outlier_threshold);
extern template double in_sample_false_alarm_rate<double>(Eigen::Index, Eigen::Index, double);
extern template outlier_report detect_outlier_workers<Eigen::MatrixXd>(const Eigen::MatrixBase<Eigen::MatrixXd>&,
                                                                       const mahalanobis_options&);
#endif

}  // namespace failslow::detect

#if FAILSLOW_HEADER_ONLY
#include "failslow/detect/impl/mahalanobis.ipp"
#endif
