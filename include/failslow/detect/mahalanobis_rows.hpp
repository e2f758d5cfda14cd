// failslow/detect/mahalanobis_rows.hpp -- KAT's inter-worker detector without Eigen: which
// workers' feature vectors are far from the others', by Mahalanobis distance with an adaptive
// chi-square threshold, on a row-major array of doubles. detect/mahalanobis.hpp is the same
// detector on Eigen matrices.
//
// Synopsis
//   fit_mahalanobis_rows(x, N, d, o) -> mahalanobis_fit  the reference distribution of x's rows
//   fit.squared_distance(row)                            D^2 of one worker (d values, as in x)
//   mahalanobis_threshold(dof, N, q, rule)               the outlier threshold on D (below)
//   chi2_quantile, chi2_sf, in_sample_false_alarm_rate   its distributions
//   X: N workers x d features, row-major doubles (detect/mahalanobis.hpp takes an Eigen matrix
//   or expression of any arithmetic scalar and calls this). Per worker
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
//   Sigma is diagonalised by the cyclic Jacobi method (detect/detail/symmetric_eigen.hpp), the
//   distances of MCD's C-steps solved by Cholesky: no Eigen here, so a file that includes this
//   header (the diagnosis's L3 does) does not parse Eigen's decompositions.
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
// Complexity: sample / ledoit_wolf O(N d^2 + d^3) (Jacobi: 6-10 sweeps of O(d^3)); mcd
//   O(starts * 600 d^2 + 10 * steps * N d^2) (starts are refined on a subsample of at most 600
//   workers). Memory O(N d).
// Accuracy: the decompositions are backward stable, so a distance carries a relative error of
//   about d u kappa (u = 2^-52, kappa the condition number of the standardised Sigma, at most
//   1 / eigen_floor after the floor). The tests agree with scipy (sample covariance) and the
//   Ledoit-Wolf reference to 1e-8 relative, and the eigendecomposition and Cholesky factor with
//   Eigen's SelfAdjointEigenSolver and LLT to 1e-13 of the matrix's norm.
// Errors: N < 2 or d < 1 throw failslow::invalid_argument; NaN/Inf in X (or a null x with N d > 0) throws
//   failslow::domain_error; quantile outside (0, 1), eigen_floor outside [0, 1), mcd_support
//   outside [0, 1] or mcd_starts 0 throw failslow::invalid_argument. When every feature is
//   constant the distances are 0, the p-values 1 and no worker is flagged.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"
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

/// The reference distribution of a fit on rows: D^2(x) = || whitening (x[features] - location) ||^2.
/// Matrices are row-major, dof() x dof().
struct mahalanobis_fit {
  std::vector<double> location;                   ///< mean (robust for mcd), original units
  std::vector<double> covariance;                 ///< the (regularised) covariance used, original units
  std::vector<double> whitening;                  ///< dof x dof
  std::vector<std::ptrdiff_t> features;           ///< columns of X used
  std::vector<std::ptrdiff_t> constant_features;  ///< columns dropped (no variation)
  std::size_t columns = 0;                        ///< d of the X fitted
  std::ptrdiff_t workers = 0;                     ///< N the model was fitted on
  double shrinkage = 0.0;                         ///< Ledoit-Wolf intensity (0 for sample and mcd)
  std::size_t floored_eigenvalues = 0;
  std::vector<char> support;  ///< workers that formed the estimate (all but mcd's outliers)

  std::ptrdiff_t dof() const noexcept { return static_cast<std::ptrdiff_t>(features.size()); }

  /// Squared distance of one worker: x holds `columns` values, as a row of the X fitted.
  double squared_distance(const double* x) const {
    const std::size_t p = features.size();
    double d2 = 0.0;
    for (std::size_t i = 0; i < p; ++i) {
      double w = 0.0;
      for (std::size_t j = 0; j < p; ++j) w += whitening[i * p + j] * (x[features[j]] - location[j]);
      d2 += w * w;
    }
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
double mahalanobis_threshold(std::ptrdiff_t dof, std::ptrdiff_t n, double quantile = 0.99,
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
double in_sample_false_alarm_rate(std::ptrdiff_t n, std::ptrdiff_t d, double threshold) {
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

/// Fits the reference distribution of the n rows of x, row-major n x d (see the synopsis).
FAILSLOW_FUNC mahalanobis_fit fit_mahalanobis_rows(const double* x, std::size_t n, std::size_t d,
                                                   const mahalanobis_options& o = {});

#ifdef FAILSLOW_SEPARATE_COMPILATION
// Separately compiled mode (README, "Compile times"): instantiated once in src/failslow.cpp
// (target failslow::compiled), declared here so that no user translation unit instantiates them.
extern template double chi2_quantile<double>(double, double);
extern template double chi2_sf<double>(double, double);
extern template double mahalanobis_threshold<double>(std::ptrdiff_t, std::ptrdiff_t, double, outlier_threshold);
extern template double in_sample_false_alarm_rate<double>(std::ptrdiff_t, std::ptrdiff_t, double);
#endif

}  // namespace failslow::detect

#if FAILSLOW_HEADER_ONLY
#include "failslow/detect/impl/mahalanobis_rows.ipp"
#endif
