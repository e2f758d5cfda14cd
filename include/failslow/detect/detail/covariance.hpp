// failslow/detect/detail/covariance.hpp -- covariance estimators behind
// failslow/detect/mahalanobis_rows.hpp: sample, Ledoit-Wolf shrinkage, FAST-MCD. They work on an
// n x p row_matrix<double> (rows are observations), on the subset of rows a list names, with
// row_matrix.hpp's Cholesky and symmetric_eigen.hpp's Jacobi method: no Eigen, so a file that
// includes the diagnosis does not parse Eigen's decompositions (issue 22).
//
// Every function here is a template on the matrix type (row_matrix<double> at every call), so
// nothing is instantiated in a translation unit that does not fit a model. The chi-square
// quantiles of the consistency factors are stats/detail/incomplete_gamma.hpp's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "failslow/core/detail/splitmix.hpp"
#include "failslow/detect/detail/row_matrix.hpp"
#include "failslow/detect/detail/symmetric_eigen.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/incomplete_gamma.hpp"

namespace failslow::detect::detail {

using row_list = std::vector<std::size_t>;

inline row_list all_rows(std::size_t n) {
  row_list r(n);
  std::iota(r.begin(), r.end(), std::size_t{0});
  return r;
}

struct location_scatter {
  std::vector<double> mean;
  row_matrix<double> cov;
  double shrinkage = 0.0;
};

// Mean of the listed rows of z, and their centred values feature-major: c(j, i) is feature j of
// the i-th listed row, so that scatter's sums run over contiguous values.
template <class Matrix>
Matrix centred_columns(const Matrix& z, const row_list& rows, std::vector<double>& mean) {
  const std::size_t p = z.cols, m = rows.size();
  mean.assign(p, 0.0);
  for (std::size_t r : rows)
    for (std::size_t j = 0; j < p; ++j) mean[j] += z(r, j);
  for (double& v : mean) v /= static_cast<double>(m);
  Matrix c(p, m);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < p; ++j) c(j, i) = z(rows[i], j) - mean[j];
  return c;
}

// c c^T / denom (p x p) of centred columns c (p x m). Four partial sums per entry: independent
// additions the CPU overlaps, where one running sum waits for each.
template <class Matrix>
Matrix scatter(const Matrix& c, double denom) {
  const std::size_t p = c.rows, m = c.cols;
  Matrix s(p, p);
  for (std::size_t j = 0; j < p; ++j)
    for (std::size_t k = j; k < p; ++k) {
      const double* a = c.row(j);
      const double* b = c.row(k);
      double acc[4] = {0.0, 0.0, 0.0, 0.0};
      std::size_t i = 0;
      for (; i + 4 <= m; i += 4)
        for (std::size_t u = 0; u < 4; ++u) acc[u] += a[i + u] * b[i + u];
      for (; i < m; ++i) acc[0] += a[i] * b[i];
      s(j, k) = s(k, j) = ((acc[0] + acc[1]) + (acc[2] + acc[3])) / denom;
    }
  return s;
}

// Mean and covariance (divided by n - ddof) of the listed rows of z.
template <class Matrix>
location_scatter sample_estimate(const Matrix& z, const row_list& rows, int ddof) {
  location_scatter r;
  const Matrix c = centred_columns(z, rows, r.mean);
  r.cov = scatter(c, std::max(1.0, static_cast<double>(rows.size()) - ddof));
  return r;
}

// Ledoit & Wolf (2004) shrinkage of the MLE covariance towards mu I, mu = trace / p:
//   S = Xc^T Xc / n,  delta = ||S - mu I||_F^2 / p,
//   beta = min(delta, (1 / n^2) sum_k ||x_k x_k^T - S||_F^2 / p),  shrinkage = beta / delta.
template <class Matrix>
location_scatter ledoit_wolf_estimate(const Matrix& z, const row_list& rows) {
  location_scatter r;
  const double n = static_cast<double>(rows.size());
  const std::size_t p = z.cols;
  const double pd = static_cast<double>(p);
  const Matrix x = centred_columns(z, rows, r.mean);
  Matrix s = scatter(x, n);
  double trace = 0.0, s_norm2 = 0.0, sum_outer = 0.0;
  for (std::size_t j = 0; j < p; ++j) trace += s(j, j);
  for (double v : s.data) s_norm2 += v * v;
  // sum_k ||x_k x_k^T||_F^2 = sum_k (sum_j x_kj^2)^2
  std::vector<double> row_norm2(rows.size(), 0.0);
  for (std::size_t j = 0; j < p; ++j) {
    const double* xj = x.row(j);
    for (std::size_t i = 0; i < rows.size(); ++i) row_norm2[i] += xj[i] * xj[i];
  }
  for (double v : row_norm2) sum_outer += v * v;
  const double mu = trace / pd;
  // (1/n^2) sum_k ||x_k x_k^T - S||_F^2 = (1/n^2) (sum_k ||x_k x_k^T||^2 - n ||S||^2)
  const double beta_bar = (sum_outer / n - s_norm2) / n / pd;
  const double delta = (s_norm2 - 2.0 * mu * trace + pd * mu * mu) / pd;
  const double beta = std::min(std::max(beta_bar, 0.0), delta);
  r.shrinkage = delta > 0.0 ? beta / delta : 0.0;
  for (double& v : s.data) v *= 1.0 - r.shrinkage;
  for (std::size_t j = 0; j < p; ++j) s(j, j) += r.shrinkage * mu;
  r.cov = std::move(s);
  return r;
}

// log det of a symmetric positive semi-definite matrix (-inf when singular).
template <class Matrix>
double log_det(const Matrix& c) {
  Matrix l;
  if (!cholesky(c, l)) return -std::numeric_limits<double>::infinity();
  return cholesky_log_det(l);
}

// Squared Mahalanobis distances of the listed rows of z to (mean, cov); cov positive definite
// (an eigenvalue floor otherwise).
template <class Matrix>
std::vector<double> squared_distances(const Matrix& z, const row_list& rows, const std::vector<double>& mean,
                                      const Matrix& cov) {
  const std::size_t p = z.cols, m = rows.size();
  std::vector<double> d2(m, 0.0), c(p);
  Matrix l;
  if (cholesky(cov, l)) {
    // Forward substitution l w = x - mean for all rows at once, feature-major (w(i, r)), so the
    // inner loops run over rows and vectorise.
    Matrix w(p, m);
    for (std::size_t r = 0; r < m; ++r)
      for (std::size_t j = 0; j < p; ++j) w(j, r) = z(rows[r], j) - mean[j];
    for (std::size_t i = 0; i < p; ++i) {
      double* wi = w.row(i);
      for (std::size_t k = 0; k < i; ++k) {
        const double lik = l(i, k);
        const double* wk = w.row(k);
        for (std::size_t r = 0; r < m; ++r) wi[r] -= lik * wk[r];
      }
      const double lii = l(i, i);
      for (std::size_t r = 0; r < m; ++r) {
        wi[r] /= lii;
        d2[r] += wi[r] * wi[r];
      }
    }
    return d2;
  }
  const auto es = symmetric_eigen(cov);
  std::vector<double> inv_sqrt(p);
  const double top = *std::max_element(es.values.begin(), es.values.end());
  const double floor = std::max(top, 1e-300) * 1e-10;
  for (std::size_t k = 0; k < p; ++k) inv_sqrt[k] = 1.0 / std::sqrt(std::max(es.values[k], floor));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < p; ++j) c[j] = z(rows[i], j) - mean[j];
    double s = 0.0;
    for (std::size_t k = 0; k < p; ++k) {
      double proj = 0.0;
      for (std::size_t j = 0; j < p; ++j) proj += es.vectors(j, k) * c[j];
      proj *= inv_sqrt[k];
      s += proj * proj;
    }
    d2[i] = s;
  }
  return d2;
}

struct mcd_result {
  location_scatter estimate;
  std::vector<char> support;  // rows used by the final estimate
  double log_det = 0.0;       // of the raw (unscaled) subset covariance
};

// Matrix: row_matrix<double> (a template only so that nothing is instantiated until a model is fitted).
template <class Matrix>
class fast_mcd {
 public:
  fast_mcd(const Matrix& z, std::size_t h, std::size_t starts, std::uint64_t seed)
      : z_(z), n_(z.rows), p_(z.cols), h_(h), starts_(starts), rng_(seed) {}

  // Consistency (after Rousseeuw & Van Driessen 1999): the raw subset covariance is scaled so the
  // median squared distance of all rows is chi2_p(0.5); the reweighted covariance (rows with
  // d^2 <= chi2_p(q) under the raw estimate) so the median squared distance of its own rows is
  // chi2_p(q / 2), the median of a chi-square truncated at its q-quantile. Both absorb the
  // finite-sample shrinking of the covariance of the nearest points, and the second does not
  // depend on the fraction of outliers.
  mcd_result run(bool reweight, double reweight_quantile) {
    mcd_result raw = p_ == 1 ? univariate() : multivariate();
    auto chi2 = [dof = static_cast<double>(p_)](double q) { return stats::detail::chi_squared_quantile(dof, q); };
    const row_list all = all_rows(n_);
    std::vector<double> d2 = squared_distances(z_, all, raw.estimate.mean, raw.estimate.cov);
    const double raw_factor = stats::median(d2) / chi2(0.5);
    if (raw_factor > 0.0 && std::isfinite(raw_factor)) {
      for (double& v : raw.estimate.cov.data) v *= raw_factor;
      for (double& v : d2) v /= raw_factor;
    }
    if (!reweight) return raw;
    const double cut = chi2(reweight_quantile);
    row_list keep;
    for (std::size_t i = 0; i < n_; ++i)
      if (d2[i] <= cut) keep.push_back(i);
    if (keep.size() < h_) return raw;  // keep at least the raw support
    mcd_result r;
    r.log_det = raw.log_det;
    r.estimate = estimate_rows(keep);
    const double factor =
        stats::median(squared_distances(z_, keep, r.estimate.mean, r.estimate.cov)) / chi2(reweight_quantile / 2.0);
    if (factor > 0.0 && std::isfinite(factor))
      for (double& v : r.estimate.cov.data) v *= factor;
    r.support.assign(n_, 0);
    for (std::size_t i : keep) r.support[i] = 1;
    return r;
  }

 private:
  // MLE mean/covariance of the given rows; Ledoit-Wolf shrunk when the rows cannot span p
  // dimensions (the regularised MCD for h <= p).
  location_scatter estimate_rows(const row_list& rows) const {
    if (rows.size() <= p_) return ledoit_wolf_estimate(z_, rows);
    return sample_estimate(z_, rows, 0);
  }

  // Rows of the h smallest squared distances to (mean, cov) among `pool`.
  row_list nearest(const location_scatter& e, const row_list& pool, std::size_t h) const {
    const std::vector<double> d2 = squared_distances(z_, pool, e.mean, e.cov);
    row_list order = all_rows(pool.size());
    const auto hh = static_cast<std::ptrdiff_t>(std::min(h, pool.size()));
    std::nth_element(order.begin(), order.begin() + hh - 1, order.end(),
                     [&](std::size_t a, std::size_t b) { return d2[a] < d2[b] || (d2[a] == d2[b] && a < b); });
    row_list out;
    out.reserve(static_cast<std::size_t>(hh));
    for (std::ptrdiff_t i = 0; i < hh; ++i) out.push_back(pool[order[static_cast<std::size_t>(i)]]);
    std::sort(out.begin(), out.end());
    return out;
  }

  struct candidate {
    double log_det;
    location_scatter est;
    row_list rows;
  };

  // C-steps (Rousseeuw & Van Driessen 1999): each step can only lower det; stop when the
  // subset repeats or after max_steps.
  candidate csteps(candidate c, const row_list& pool, std::size_t h, int max_steps) const {
    for (int s = 0; s < max_steps; ++s) {
      row_list rows = nearest(c.est, pool, h);
      if (rows == c.rows) break;
      location_scatter e = estimate_rows(rows);
      const double ld = log_det(e.cov);
      if (!(ld < c.log_det) && s > 0) break;
      c = candidate{ld, std::move(e), std::move(rows)};
    }
    return c;
  }

  mcd_result multivariate() {
    const row_list all = all_rows(n_);
    // Large n: the starts are refined on a random subsample first (FAST-MCD's nested scheme,
    // one level), then the best ten on all rows.
    const std::size_t sub_n = std::min<std::size_t>(n_, 600);
    row_list pool = all;
    if (sub_n < n_) {
      partial_shuffle(pool, sub_n);
      pool.resize(sub_n);
      std::sort(pool.begin(), pool.end());
    }
    const std::size_t h_sub = sub_n < n_ ? std::max(p_ + 1, (h_ * sub_n + n_ - 1) / n_) : h_;
    std::vector<candidate> best;
    row_list scratch = pool;
    for (std::size_t s = 0; s < starts_; ++s) {
      // a (p + 1)-subset (fewer rows when h <= p: the regularised estimate takes over)
      std::size_t k = std::min(p_ + 1, h_sub);
      partial_shuffle(scratch, std::min(scratch.size(), h_sub));
      row_list rows(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(k));
      location_scatter e = sample_estimate(z_, rows, 0);
      double ld = log_det(e.cov);
      while (!std::isfinite(ld) && k < h_sub) {  // singular: add rows
        rows.push_back(scratch[k++]);
        e = sample_estimate(z_, rows, 0);
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
    out.support.assign(n_, 0);
    for (std::size_t i : winner.rows) out.support[i] = 1;
    return out;
  }

  // Exact univariate MCD: the h consecutive order statistics with the smallest variance.
  mcd_result univariate() const {
    row_list order = all_rows(n_);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return z_(a, 0) < z_(b, 0); });
    const double hd = static_cast<double>(h_);
    double s1 = 0.0, s2 = 0.0;
    for (std::size_t i = 0; i < h_; ++i) {
      const double v = z_(order[i], 0);
      s1 += v;
      s2 += v * v;
    }
    double best_var = s2 / hd - (s1 / hd) * (s1 / hd);
    std::size_t best_start = 0;
    for (std::size_t start = 1; start + h_ <= n_; ++start) {
      const double out = z_(order[start - 1], 0);
      const double in = z_(order[start + h_ - 1], 0);
      s1 += in - out;
      s2 += in * in - out * out;
      const double var = s2 / hd - (s1 / hd) * (s1 / hd);
      if (var < best_var) {
        best_var = var;
        best_start = start;
      }
    }
    const auto first = order.begin() + static_cast<std::ptrdiff_t>(best_start);
    row_list rows(first, first + static_cast<std::ptrdiff_t>(h_));
    std::sort(rows.begin(), rows.end());
    mcd_result r;
    r.estimate = estimate_rows(rows);  // recomputed directly (no running-sum rounding)
    r.log_det = log_det(r.estimate.cov);
    r.support.assign(n_, 0);
    for (std::size_t i : rows) r.support[i] = 1;
    return r;
  }

  // Moves a uniformly random k-subset of v to its front (partial Fisher-Yates).
  void partial_shuffle(row_list& v, std::size_t k) {
    for (std::size_t i = 0; i < k && i + 1 < v.size(); ++i)
      std::swap(v[i], v[i + static_cast<std::size_t>(failslow::detail::uniform_index(rng_, v.size() - i))]);
  }

  const Matrix& z_;
  std::size_t n_, p_, h_;
  std::size_t starts_;
  failslow::detail::splitmix64_engine rng_;  // the same starts on every standard library
};

}  // namespace failslow::detect::detail
