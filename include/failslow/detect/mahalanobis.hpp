// failslow/detect/mahalanobis.hpp -- KAT's inter-worker detector: which workers' feature
// vectors are far from the others', by Mahalanobis distance with an adaptive chi-square
// threshold.
//
// Synopsis
//   The detector of detect/mahalanobis_rows.hpp (its synopsis: estimators, standardisation,
//   eigenvalue floor, threshold, false-alarm rates, accuracy) on an Eigen matrix or expression
//   X of any arithmetic scalar, N workers x d features; the computation is in double.
//     fit_mahalanobis(X, o)          the reference distribution, as Eigen vectors and matrices
//     detect_outlier_workers(X, o)   every worker scored against all of them: D, p-value, outliers
//     model.squared_distances(Y)     new workers (rows of Y, X's columns) scored against a model
// Complexity: one copy of X into a row-major array (O(N d)), then mahalanobis_rows.hpp's.
// Errors: mahalanobis_rows.hpp's (invalid_argument, domain_error).
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/detect/mahalanobis_rows.hpp"

namespace failslow::detect {

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

namespace detail {

/// fit_mahalanobis on a matrix of doubles: fit_mahalanobis_rows on its rows, the result as Eigen
/// types (detect/impl/mahalanobis.ipp), compiled once in the separately compiled mode.
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
extern template outlier_report detect_outlier_workers<Eigen::MatrixXd>(const Eigen::MatrixBase<Eigen::MatrixXd>&,
                                                                       const mahalanobis_options&);
#endif

}  // namespace failslow::detect

#if FAILSLOW_HEADER_ONLY
#include "failslow/detect/impl/mahalanobis.ipp"
#endif
