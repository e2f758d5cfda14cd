// failslow/detect/impl/mahalanobis.ipp -- the definitions of detect/mahalanobis.hpp: included by
// that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <utility>
#include <vector>

#include "failslow/detect/mahalanobis.hpp"
#include "failslow/detect/mahalanobis_rows.hpp"

namespace failslow::detect::detail {

FAILSLOW_FUNC_DEF mahalanobis_model fit_mahalanobis_double(const Eigen::MatrixXd& xd, const mahalanobis_options& o) {
  using Eigen::Index;
  using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const row_major rows = xd;
  mahalanobis_fit f =
      fit_mahalanobis_rows(rows.data(), static_cast<std::size_t>(xd.rows()), static_cast<std::size_t>(xd.cols()), o);
  mahalanobis_model m;
  const Index p = f.dof();
  m.location = Eigen::Map<const Eigen::VectorXd>(f.location.data(), p);
  m.covariance = Eigen::Map<const row_major>(f.covariance.data(), p, p);
  m.whitening = Eigen::Map<const row_major>(f.whitening.data(), p, p);
  m.features.assign(f.features.begin(), f.features.end());
  m.constant_features.assign(f.constant_features.begin(), f.constant_features.end());
  m.workers = f.workers;
  m.shrinkage = f.shrinkage;
  m.floored_eigenvalues = f.floored_eigenvalues;
  m.support = std::move(f.support);
  return m;
}

}  // namespace failslow::detect::detail
