// failslow/detect/detail/covariance.hpp -- covariance estimators behind
// failslow/detect/mahalanobis.hpp: sample, Ledoit-Wolf shrinkage, FAST-MCD. They work on an
// n x p matrix in double; rows are observations.
//
// Every function here is a template on the matrix type (Eigen::MatrixXd at every call), so the
// decompositions are instantiated only in a translation unit that fits a model, not in every one
// that includes failslow/detect/mahalanobis.hpp (issue 22). The chi-square quantiles of the
// consistency factors are stats/detail/incomplete_gamma.hpp's.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "failslow/core/detail/splitmix.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/incomplete_gamma.hpp"

namespace failslow::detect::detail {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

struct location_scatter {
  VectorXd mean;
  MatrixXd cov;
  double shrinkage = 0.0;
};

// Mean and covariance (divided by n - ddof) of the rows of z.
template <class Matrix>
location_scatter sample_estimate(const Matrix& z, int ddof) {
  location_scatter r;
  r.mean = z.colwise().mean().transpose();
  const Matrix c = z.rowwise() - r.mean.transpose();
  const double denom = std::max(1.0, static_cast<double>(z.rows() - ddof));
  r.cov = (c.transpose() * c) / denom;
  return r;
}

// Ledoit & Wolf (2004) shrinkage of the MLE covariance towards mu I, mu = trace / p:
//   S = Xc^T Xc / n,  delta = ||S - mu I||_F^2 / p,
//   beta = min(delta, (1 / n^2) sum_k ||x_k x_k^T - S||_F^2 / p),  shrinkage = beta / delta.
template <class Matrix>
location_scatter ledoit_wolf_estimate(const Matrix& z) {
  location_scatter r;
  const double n = static_cast<double>(z.rows());
  const double p = static_cast<double>(z.cols());
  r.mean = z.colwise().mean().transpose();
  const Matrix x = z.rowwise() - r.mean.transpose();
  const Matrix s = (x.transpose() * x) / n;
  const double mu = s.trace() / p;
  const Matrix x2 = x.array().square().matrix();
  // sum_k ||x_k x_k^T||_F^2 = sum_k (sum_j x_kj^2)^2
  const double sum_outer = x2.rowwise().sum().squaredNorm();
  const double s_norm2 = s.squaredNorm();
  // (1/n^2) sum_k ||x_k x_k^T - S||_F^2 = (1/n^2) (sum_k ||x_k x_k^T||^2 - n ||S||^2)
  const double beta_bar = (sum_outer / n - s_norm2) / n / p;
  const double delta = (s_norm2 - 2.0 * mu * s.trace() + p * mu * mu) / p;
  const double beta = std::min(std::max(beta_bar, 0.0), delta);
  r.shrinkage = delta > 0.0 ? beta / delta : 0.0;
  r.cov = (1.0 - r.shrinkage) * s;
  r.cov.diagonal().array() += r.shrinkage * mu;
  return r;
}

// log det of a symmetric positive semi-definite matrix (-inf when singular).
template <class Matrix>
double log_det(const Matrix& c) {
  Eigen::LLT<Matrix> llt(c);
  if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  const VectorXd d = llt.matrixL().toDenseMatrix().diagonal();
  double s = 0.0;
  for (Index i = 0; i < d.size(); ++i) {
    if (!(d(i) > 0.0)) return -std::numeric_limits<double>::infinity();
    s += 2.0 * std::log(d(i));
  }
  return s;
}

// Squared Mahalanobis distances of every row of z to (mean, cov); cov must be positive definite
// (falls back to an eigenvalue floor otherwise).
template <class Matrix>
VectorXd squared_distances(const Matrix& z, const VectorXd& mean, const Matrix& cov) {
  const Matrix c = z.rowwise() - mean.transpose();
  Eigen::LLT<Matrix> llt(cov);
  Matrix w;
  if (llt.info() == Eigen::Success) {
    w = llt.matrixL().solve(c.transpose());  // p x n
  } else {
    Eigen::SelfAdjointEigenSolver<Matrix> es(cov);
    VectorXd ev = es.eigenvalues();
    const double floor = std::max(ev.maxCoeff(), 1e-300) * 1e-10;
    for (Index i = 0; i < ev.size(); ++i) ev(i) = 1.0 / std::sqrt(std::max(ev(i), floor));
    w = ev.asDiagonal() * es.eigenvectors().transpose() * c.transpose();
  }
  return w.colwise().squaredNorm().transpose();
}

inline double median_of(const VectorXd& v) { return stats::median(v.data(), v.data() + v.size()); }

struct mcd_result {
  location_scatter estimate;
  std::vector<char> support;  // rows used by the final estimate
  double log_det = 0.0;       // of the raw (unscaled) subset covariance
};

// Matrix: Eigen::MatrixXd (a template only so that nothing is instantiated until a model is fitted).
template <class Matrix>
class fast_mcd {
 public:
  fast_mcd(const Matrix& z, Index h, std::size_t starts, std::uint64_t seed)
      : z_(z), n_(z.rows()), p_(z.cols()), h_(h), starts_(starts), rng_(seed) {}

  // Consistency (after Rousseeuw & Van Driessen 1999): the raw subset covariance is scaled so the
  // median squared distance of all rows is chi2_p(0.5); the reweighted covariance (rows with
  // d^2 <= chi2_p(q) under the raw estimate) so the median squared distance of its own rows is
  // chi2_p(q / 2), the median of a chi-square truncated at its q-quantile. Both absorb the
  // finite-sample shrinking of the covariance of the nearest points, and the second does not
  // depend on the fraction of outliers.
  mcd_result run(bool reweight, double reweight_quantile) {
    mcd_result raw = p_ == 1 ? univariate() : multivariate();
    auto chi2 = [dof = static_cast<double>(p_)](double q) { return stats::detail::chi_squared_quantile(dof, q); };
    VectorXd d2 = squared_distances(z_, raw.estimate.mean, raw.estimate.cov);
    const double raw_factor = median_of(d2) / chi2(0.5);
    if (raw_factor > 0.0 && std::isfinite(raw_factor)) {
      raw.estimate.cov *= raw_factor;
      d2 /= raw_factor;
    }
    if (!reweight) return raw;
    const double cut = chi2(reweight_quantile);
    std::vector<Index> keep;
    for (Index i = 0; i < n_; ++i)
      if (d2(i) <= cut) keep.push_back(i);
    if (keep.size() < static_cast<std::size_t>(h_)) return raw;  // keep at least the raw support
    mcd_result r;
    r.log_det = raw.log_det;
    r.estimate = estimate_rows(keep);
    Matrix sub(static_cast<Index>(keep.size()), p_);
    for (std::size_t i = 0; i < keep.size(); ++i) sub.row(static_cast<Index>(i)) = z_.row(keep[i]);
    const double factor =
        median_of(squared_distances(sub, r.estimate.mean, r.estimate.cov)) / chi2(reweight_quantile / 2.0);
    if (factor > 0.0 && std::isfinite(factor)) r.estimate.cov *= factor;
    r.support.assign(static_cast<std::size_t>(n_), 0);
    for (Index i : keep) r.support[static_cast<std::size_t>(i)] = 1;
    return r;
  }

 private:
  // MLE mean/covariance of the given rows; Ledoit-Wolf shrunk when the rows cannot span p
  // dimensions (the regularised MCD for h <= p).
  location_scatter estimate_rows(const std::vector<Index>& rows) const {
    Matrix sub(static_cast<Index>(rows.size()), p_);
    for (std::size_t i = 0; i < rows.size(); ++i) sub.row(static_cast<Index>(i)) = z_.row(rows[i]);
    if (static_cast<Index>(rows.size()) <= p_) return ledoit_wolf_estimate(sub);
    return sample_estimate(sub, 0);
  }

  // Rows of the h smallest squared distances to (mean, cov) among `pool`.
  std::vector<Index> nearest(const location_scatter& e, const std::vector<Index>& pool, Index h) const {
    Matrix sub(static_cast<Index>(pool.size()), p_);
    for (std::size_t i = 0; i < pool.size(); ++i) sub.row(static_cast<Index>(i)) = z_.row(pool[i]);
    const VectorXd d2 = squared_distances(sub, e.mean, e.cov);
    std::vector<Index> order(pool.size());
    std::iota(order.begin(), order.end(), Index{0});
    const auto hh = static_cast<std::ptrdiff_t>(std::min<std::size_t>(static_cast<std::size_t>(h), pool.size()));
    std::nth_element(order.begin(), order.begin() + hh - 1, order.end(),
                     [&](Index a, Index b) { return d2(a) < d2(b) || (d2(a) == d2(b) && a < b); });
    std::vector<Index> out;
    out.reserve(static_cast<std::size_t>(hh));
    for (std::ptrdiff_t i = 0; i < hh; ++i)
      out.push_back(pool[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])]);
    std::sort(out.begin(), out.end());
    return out;
  }

  struct candidate {
    double log_det;
    location_scatter est;
    std::vector<Index> rows;
  };

  // C-steps (Rousseeuw & Van Driessen 1999): each step can only lower det; stop when the
  // subset repeats or after max_steps.
  candidate csteps(candidate c, const std::vector<Index>& pool, Index h, int max_steps) const {
    for (int s = 0; s < max_steps; ++s) {
      std::vector<Index> rows = nearest(c.est, pool, h);
      if (rows == c.rows) break;
      location_scatter e = estimate_rows(rows);
      const double ld = log_det(e.cov);
      if (!(ld < c.log_det) && s > 0) break;
      c = candidate{ld, std::move(e), std::move(rows)};
    }
    return c;
  }

  mcd_result multivariate() {
    std::vector<Index> all(static_cast<std::size_t>(n_));
    std::iota(all.begin(), all.end(), Index{0});
    // Large n: the starts are refined on a random subsample first (FAST-MCD's nested scheme,
    // one level), then the best ten on all rows.
    const Index sub_n = std::min<Index>(n_, 600);
    std::vector<Index> pool = all;
    if (sub_n < n_) {
      partial_shuffle(pool, static_cast<std::size_t>(sub_n));
      pool.resize(static_cast<std::size_t>(sub_n));
      std::sort(pool.begin(), pool.end());
    }
    const Index h_sub = sub_n < n_ ? std::max<Index>(p_ + 1, (h_ * sub_n + n_ - 1) / n_) : h_;
    std::vector<candidate> best;
    std::vector<Index> scratch = pool;
    for (std::size_t s = 0; s < starts_; ++s) {
      // a (p + 1)-subset (fewer rows when h <= p: the regularised estimate takes over)
      std::size_t k = std::min(static_cast<std::size_t>(p_ + 1), static_cast<std::size_t>(h_sub));
      partial_shuffle(scratch, std::min(scratch.size(), static_cast<std::size_t>(h_sub)));
      std::vector<Index> rows(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(k));
      location_scatter e = sample_estimate_rows(rows);
      double ld = log_det(e.cov);
      while (!std::isfinite(ld) && k < static_cast<std::size_t>(h_sub)) {  // singular: add rows
        rows.push_back(scratch[k++]);
        e = sample_estimate_rows(rows);
        ld = log_det(e.cov);
      }
      if (!std::isfinite(ld)) {
        e = estimate_rows(rows);  // shrunk
        ld = log_det(e.cov);
      }
      std::sort(rows.begin(), rows.end());
      candidate c = csteps(candidate{std::numeric_limits<double>::infinity(), std::move(e), {}}, pool, h_sub, 2);
      best.push_back(std::move(c));
      std::sort(best.begin(), best.end(), [](const candidate& a, const candidate& b) { return a.log_det < b.log_det; });
      if (best.size() > 10) best.pop_back();
    }
    candidate winner{std::numeric_limits<double>::infinity(), {}, {}};
    for (candidate& c : best) {
      c.rows.clear();
      c.log_det = std::numeric_limits<double>::infinity();
      candidate r = csteps(std::move(c), all, h_, 100);
      if (r.log_det < winner.log_det || winner.rows.empty()) winner = std::move(r);
    }
    mcd_result out;
    out.estimate = winner.est;
    out.log_det = winner.log_det;
    out.support.assign(static_cast<std::size_t>(n_), 0);
    for (Index i : winner.rows) out.support[static_cast<std::size_t>(i)] = 1;
    return out;
  }

  // Exact univariate MCD: the h consecutive order statistics with the smallest variance.
  mcd_result univariate() const {
    std::vector<Index> order(static_cast<std::size_t>(n_));
    std::iota(order.begin(), order.end(), Index{0});
    std::sort(order.begin(), order.end(), [&](Index a, Index b) { return z_(a, 0) < z_(b, 0); });
    const double hd = static_cast<double>(h_);
    double s1 = 0.0, s2 = 0.0;
    for (Index i = 0; i < h_; ++i) {
      const double v = z_(order[static_cast<std::size_t>(i)], 0);
      s1 += v;
      s2 += v * v;
    }
    double best_var = s2 / hd - (s1 / hd) * (s1 / hd);
    Index best_start = 0;
    for (Index start = 1; start + h_ <= n_; ++start) {
      const double out = z_(order[static_cast<std::size_t>(start - 1)], 0);
      const double in = z_(order[static_cast<std::size_t>(start + h_ - 1)], 0);
      s1 += in - out;
      s2 += in * in - out * out;
      const double var = s2 / hd - (s1 / hd) * (s1 / hd);
      if (var < best_var) {
        best_var = var;
        best_start = start;
      }
    }
    std::vector<Index> rows(order.begin() + best_start, order.begin() + best_start + h_);
    std::sort(rows.begin(), rows.end());
    mcd_result r;
    r.estimate = estimate_rows(rows);  // recomputed directly (no running-sum rounding)
    r.log_det = log_det(r.estimate.cov);
    r.support.assign(static_cast<std::size_t>(n_), 0);
    for (Index i : rows) r.support[static_cast<std::size_t>(i)] = 1;
    return r;
  }

  location_scatter sample_estimate_rows(const std::vector<Index>& rows) const {
    Matrix sub(static_cast<Index>(rows.size()), p_);
    for (std::size_t i = 0; i < rows.size(); ++i) sub.row(static_cast<Index>(i)) = z_.row(rows[i]);
    return sample_estimate(sub, 0);
  }

  // Moves a uniformly random k-subset of v to its front (partial Fisher-Yates).
  void partial_shuffle(std::vector<Index>& v, std::size_t k) {
    for (std::size_t i = 0; i < k && i + 1 < v.size(); ++i)
      std::swap(v[i], v[i + static_cast<std::size_t>(failslow::detail::uniform_index(rng_, v.size() - i))]);
  }

  const Matrix& z_;
  Index n_, p_, h_;
  std::size_t starts_;
  failslow::detail::splitmix64_engine rng_;  // the same starts on every standard library
};

}  // namespace failslow::detect::detail
