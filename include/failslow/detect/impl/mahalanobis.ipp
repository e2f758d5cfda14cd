// failslow/detect/impl/mahalanobis.ipp -- the definitions of detect/mahalanobis.hpp: included by
// that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp). The
// estimators and the eigendecomposition (Eigen's Eigenvalues module) are read only here.
#pragma once

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/detect/detail/covariance.hpp"
#include "failslow/detect/mahalanobis.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::detect::detail {

FAILSLOW_FUNC_DEF mahalanobis_model fit_mahalanobis_double(const Eigen::MatrixXd& xd, const mahalanobis_options& o) {
  using Eigen::Index;
  check_mahalanobis_options(o);
  const Index n = xd.rows(), d = xd.cols();
  if (n < 2) throw invalid_argument("mahalanobis: needs at least 2 workers, got " + std::to_string(n));
  if (d < 1) throw invalid_argument("mahalanobis: needs at least 1 feature");
  if (!xd.allFinite()) throw domain_error("mahalanobis: features contain NaN or infinity");

  mahalanobis_model m;
  m.workers = n;
  const bool robust = o.estimator == covariance_estimator::mcd;
  std::vector<double> centre, scale;
  for (Index j = 0; j < d; ++j) {
    const Eigen::VectorXd col = xd.col(j);
    const auto mom = stats::moments(col);
    const double sd = mom.stddev();
    const double big = col.cwiseAbs().maxCoeff();
    if (!(sd > 1e-12 * big)) {
      m.constant_features.push_back(j);
      continue;
    }
    m.features.push_back(j);
    double c = mom.mean(), s = sd;
    if (robust) {
      c = stats::median(col);
      const double mad = stats::mad_normal(col);
      if (mad > 0.0) s = mad;
    }
    centre.push_back(c);
    scale.push_back(o.standardize ? s : 1.0);
  }
  const Index p = m.dof();
  m.support.assign(static_cast<std::size_t>(n), 1);
  if (p == 0) {
    m.location.resize(0);
    m.covariance.resize(0, 0);
    m.whitening.resize(0, 0);
    return m;
  }
  Eigen::MatrixXd z(n, p);
  for (Index j = 0; j < p; ++j)
    z.col(j) = (xd.col(m.features[static_cast<std::size_t>(j)]).array() - centre[static_cast<std::size_t>(j)]) /
               scale[static_cast<std::size_t>(j)];

  location_scatter est;
  switch (o.estimator) {
    case covariance_estimator::sample:
      est = sample_estimate(z, 1);
      break;
    case covariance_estimator::ledoit_wolf:
      est = ledoit_wolf_estimate(z);
      break;
    case covariance_estimator::mcd: {
      Index h =
          o.mcd_support > 0.0 ? static_cast<Index>(std::ceil(o.mcd_support * static_cast<double>(n))) : (n + p + 1) / 2;
      h = std::min(std::max<Index>(h, std::min<Index>(n, 2)), n);
      if (h >= n) {
        est = sample_estimate(z, 0);
      } else {
        fast_mcd<Eigen::MatrixXd> mcd(z, h, o.mcd_starts, o.mcd_seed);
        mcd_result r = mcd.run(o.mcd_reweight, 0.975);
        est = std::move(r.estimate);
        m.support = std::move(r.support);
      }
      break;
    }
  }
  m.shrinkage = est.shrinkage;

  // Regularise by an eigenvalue floor, then whiten: W = Lambda^-1/2 V^T diag(1/scale).
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(est.cov);
  Eigen::VectorXd ev = es.eigenvalues();
  const double top = ev.maxCoeff();
  const double floor = top > 0.0 ? std::max(top * o.eigen_floor, std::numeric_limits<double>::min())
                                 : 1.0;  // a zero covariance: distances in standardised units
  for (Index i = 0; i < p; ++i)
    if (ev(i) < floor) {
      ev(i) = floor;
      ++m.floored_eigenvalues;
    }
  const Eigen::MatrixXd& v = es.eigenvectors();
  Eigen::VectorXd inv_scale(p), sc(p);
  for (Index j = 0; j < p; ++j) {
    sc(j) = scale[static_cast<std::size_t>(j)];
    inv_scale(j) = 1.0 / sc(j);
  }
  m.whitening = ev.cwiseSqrt().cwiseInverse().asDiagonal() * v.transpose() * inv_scale.asDiagonal();
  m.covariance = sc.asDiagonal() * (v * ev.asDiagonal() * v.transpose()) * sc.asDiagonal();
  m.location.resize(p);
  for (Index j = 0; j < p; ++j) m.location(j) = centre[static_cast<std::size_t>(j)] + sc(j) * est.mean(j);
  return m;
}

}  // namespace failslow::detect::detail
