// Uses failslow's separately compiled mode (failslow::compiled, FAILSLOW_SEPARATE_COMPILATION):
// the heavy templates below are declared extern here and come from the library. Exits non-zero
// when anything is off.
#include <Eigen/Core>
#include <cmath>
#include <failslow/detect/ewma_design.hpp>
#include <failslow/detect/mahalanobis.hpp>
#include <iostream>

int main() {
#ifndef FAILSLOW_SEPARATE_COMPILATION
  std::cout << "FAILSLOW_SEPARATE_COMPILATION is not defined by failslow::compiled\n";
  return 1;
#else
  namespace fd = failslow::detect;
  Eigen::MatrixXd x(40, 3);
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      x(i, j) = std::sin(0.7 * static_cast<double>(i) + 1.3 * static_cast<double>(j)) + 0.1 * static_cast<double>(j);
  x(17, 1) += 25.0;  // one worker far from the others
  const fd::outlier_report r = fd::detect_outlier_workers(x);
  const bool ok = r.outliers.size() == 1 && r.outliers[0] == 17 &&
                  std::abs(fd::chi2_quantile(2.0, 0.5) - 2.0 * std::log(2.0)) < 1e-12 &&
                  std::abs(fd::ewma_limit_for_arl(1.0, 370.398) - 3.0) < 1e-4;
  std::cout << "failslow::compiled: " << (ok ? "ok" : "FAILED") << '\n';
  return ok ? 0 : 1;
#endif
}
