// failslow/detect/impl/mahalanobis_rows.ipp -- the definitions of detect/mahalanobis_rows.hpp:
// included by that header (header-only) or compiled once in src/failslow.cpp
// (core/compile_mode.hpp). The estimators and the decompositions are read only here.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/detect/detail/covariance.hpp"
#include "failslow/detect/detail/row_matrix.hpp"
#include "failslow/detect/detail/symmetric_eigen.hpp"
#include "failslow/detect/mahalanobis_rows.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::detect {

FAILSLOW_FUNC_DEF mahalanobis_fit fit_mahalanobis_rows(const double* x, std::size_t n, std::size_t d,
                                                       const mahalanobis_options& o) {
  detail::check_mahalanobis_options(o);
  if (n < 2) throw invalid_argument("mahalanobis: needs at least 2 workers, got " + std::to_string(n));
  if (d < 1) throw invalid_argument("mahalanobis: needs at least 1 feature");
  if (x == nullptr) throw domain_error("mahalanobis: null feature matrix");
  for (std::size_t i = 0; i < n * d; ++i)
    if (!std::isfinite(x[i])) throw domain_error("mahalanobis: features contain NaN or infinity");

  mahalanobis_fit m;
  m.columns = d;
  m.workers = static_cast<std::ptrdiff_t>(n);
  const bool robust = o.estimator == covariance_estimator::mcd;
  std::vector<double> centre, scale, col(n);
  for (std::size_t j = 0; j < d; ++j) {
    double big = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      col[i] = x[i * d + j];
      big = std::max(big, std::fabs(col[i]));
    }
    const auto mom = stats::moments(col);
    const double sd = mom.stddev();
    if (!(sd > 1e-12 * big)) {
      m.constant_features.push_back(static_cast<std::ptrdiff_t>(j));
      continue;
    }
    m.features.push_back(static_cast<std::ptrdiff_t>(j));
    double c = mom.mean(), s = sd;
    if (robust) {
      c = stats::median(col);
      const double mad = stats::mad_normal(col);
      if (mad > 0.0) s = mad;
    }
    centre.push_back(c);
    scale.push_back(o.standardize ? s : 1.0);
  }
  const std::size_t p = m.features.size();
  m.support.assign(n, 1);
  if (p == 0) return m;
  detail::row_matrix<double> z(n, p);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < p; ++j)
      z(i, j) = (x[i * d + static_cast<std::size_t>(m.features[j])] - centre[j]) / scale[j];

  detail::location_scatter est;
  switch (o.estimator) {
    case covariance_estimator::sample:
      est = detail::sample_estimate(z, detail::all_rows(n), 1);
      break;
    case covariance_estimator::ledoit_wolf:
      est = detail::ledoit_wolf_estimate(z, detail::all_rows(n));
      break;
    case covariance_estimator::mcd: {
      std::size_t h = o.mcd_support > 0.0 ? static_cast<std::size_t>(std::ceil(o.mcd_support * static_cast<double>(n)))
                                          : (n + p + 1) / 2;
      h = std::min(std::max<std::size_t>(h, 2), n);
      if (h >= n) {
        est = detail::sample_estimate(z, detail::all_rows(n), 0);
      } else {
        detail::fast_mcd<detail::row_matrix<double>> mcd(z, h, o.mcd_starts, o.mcd_seed);
        detail::mcd_result r = mcd.run(o.mcd_reweight, 0.975);
        est = std::move(r.estimate);
        m.support = std::move(r.support);
      }
      break;
    }
  }
  m.shrinkage = est.shrinkage;

  // Regularise by an eigenvalue floor, then whiten: W = Lambda^-1/2 V^T diag(1/scale).
  auto es = detail::symmetric_eigen(est.cov);
  std::vector<double>& ev = es.values;
  const double top = *std::max_element(ev.begin(), ev.end());
  const double floor = top > 0.0 ? std::max(top * o.eigen_floor, std::numeric_limits<double>::min())
                                 : 1.0;  // a zero covariance: distances in standardised units
  for (double& e : ev)
    if (e < floor) {
      e = floor;
      ++m.floored_eigenvalues;
    }
  const auto& v = es.vectors;
  m.whitening.assign(p * p, 0.0);
  m.covariance.assign(p * p, 0.0);
  for (std::size_t i = 0; i < p; ++i)
    for (std::size_t j = 0; j < p; ++j) {
      m.whitening[i * p + j] = v(j, i) / std::sqrt(ev[i]) / scale[j];
      double c = 0.0;
      for (std::size_t k = 0; k < p; ++k) c += v(i, k) * ev[k] * v(j, k);
      m.covariance[i * p + j] = scale[i] * c * scale[j];
    }
  m.location.resize(p);
  for (std::size_t j = 0; j < p; ++j) m.location[j] = centre[j] + scale[j] * est.mean[j];
  return m;
}

}  // namespace failslow::detect
