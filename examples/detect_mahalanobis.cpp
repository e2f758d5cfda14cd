// KAT inter-worker: 12 features per worker for one traced event; which workers are unusual?
//   ./example_detect_mahalanobis
#include <Eigen/Dense>
#include <cmath>
#include <cstddef>
#include <failslow/detect/mahalanobis.hpp>
#include <failslow/detect/mahalanobis_rows.hpp>
#include <iostream>
#include <random>
#include <vector>

int main() {
  using namespace failslow::detect;
  const Eigen::Index workers = 256, features = 12;  // duration, child count, bytes, ...
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  Eigen::MatrixXd x(workers, features);
  for (Eigen::Index i = 0; i < workers; ++i)
    for (Eigen::Index j = 0; j < features; ++j)
      x(i, j) = 100.0 * static_cast<double>(j + 1) + 3.0 * g(rng) + 0.5 * x(i, 0);
  x.col(5).setConstant(64.0);  // a feature identical everywhere: dropped, not a singular matrix
  x(42, 0) += 25.0;            // worker 42: slow event
  x(42, 3) -= 20.0;

  mahalanobis_options o;  // Ledoit-Wolf covariance, threshold sqrt(chi2_0.99(d)) (1 + 1/sqrt(N))
  const auto r = detect_outlier_workers(x, o);
  std::cout << "d = " << r.model.dof() << " features used, shrinkage " << r.model.shrinkage << ", threshold D > "
            << r.threshold << '\n';
  for (Eigen::Index w : r.outliers)
    std::cout << "worker " << w << ": D = " << r.distance(w) << ", p = " << r.p_value(w) << '\n';

  o.estimator = covariance_estimator::mcd;  // robust: a whole rack of slow workers cannot hide
  std::cout << "MCD flags " << detect_outlier_workers(x, o).outliers.size() << " worker(s)\n";

  // The same detector without Eigen (detect/mahalanobis_rows.hpp): a row-major array of doubles,
  // here worker 42 scored against the other 255 (leave one out, as the diagnosis's L3 does).
  const auto n = static_cast<std::size_t>(workers), d = static_cast<std::size_t>(features);
  std::vector<double> others;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d && i != 42; ++j)
      others.push_back(x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)));
  const mahalanobis_fit fit = fit_mahalanobis_rows(others.data(), n - 1, d);
  std::vector<double> w42(d);
  for (std::size_t j = 0; j < d; ++j) w42[j] = x(42, static_cast<Eigen::Index>(j));
  std::cout << "worker 42 against the others: D = " << std::sqrt(fit.squared_distance(w42.data())) << ", threshold "
            << mahalanobis_threshold(fit.dof(), fit.workers) << '\n';
}
