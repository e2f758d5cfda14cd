// KAT inter-worker: 12 features per worker for one traced event; which workers are unusual?
//   ./example_detect_mahalanobis
#include <Eigen/Dense>
#include <failslow/detect/mahalanobis.hpp>
#include <iostream>
#include <random>

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
}
