// failslow/stats/w1_matrix.hpp -- N x N Wasserstein-1 distance matrices.
//
// Synopsis
//   D(i, j) = W1(distribution i, distribution j), symmetric with a zero diagonal, as an
//   Eigen::MatrixXd, for N distributions given as
//     w1_matrix_quantiles(Q, threads)   rows of Q are quantile vectors at u_k = (k + 1/2)/K
//                                       (wasserstein.hpp's quantile_vector): D = L1 row
//                                       distance / K, as scipy's cdist(Q, Q, 'cityblock') / K
//     w1_matrix_samples(samples, threads)  exact W1 between raw sample sets (any sizes)
//     w1_matrix_summaries(summaries, K, truncated, threads)  quantile vectors of the
//                                       reconstructed lognormal mixtures, then as above
//   and, for group-aware comparison at 10^4+ ranks where the full matrix is not wanted,
//     w1_matrices_within_groups(Q, groups, threads)  one small matrix per group of row
//                                       indices (e.g. the DP groups of core/topology.hpp).
//   Each row is compared with four later rows at a time in independent lanes the compiler
//   vectorises (SSE2 by default; build with -march=native for AVX). Work is split over `threads` std::threads
//   chosen by the caller (1 = the calling thread only); there is no hidden thread pool.
// Complexity: quantile form O(N^2 K / 2); samples O(N n log n + N^2 n / 2) for N sets of n.
// Accuracy: quantile form as wasserstein1_quantiles (see wasserstein.hpp); samples exact.
// Errors: threads == 0, empty inputs, NaN/Inf, group indices out of range throw
//   failslow::invalid_argument / failslow::domain_error.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/wasserstein.hpp"

namespace failslow::stats {

/// Rows stored contiguously (row-major), one quantile vector per row.
using quantile_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace detail {

// Runs body(i) for i in [0, n) on `threads` threads, handing out rows dynamically (the upper
// triangle makes early rows heavier). Rethrows the first exception on the calling thread.
template <class Body>
void parallel_rows(std::size_t n, unsigned threads, Body&& body) {
  if (threads == 0) throw invalid_argument("threads must be >= 1");
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    try {
      for (std::size_t i; (i = next.fetch_add(1)) < n;) body(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = n;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<std::size_t>(threads, n); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

// L1 distances of row i against every later row, four rows at a time, each with four
// independent lanes (vectorised without reassociating a single sum). Measured faster than
// blocking several rows i against each later row, which spills the accumulators.
inline void l1_row(const quantile_matrix& q, std::size_t i, Eigen::MatrixXd& d) {
  const auto k = static_cast<std::size_t>(q.cols());
  const auto n = static_cast<std::size_t>(q.rows());
  const double* a = q.data() + i * k;
  const double scale = 1.0 / static_cast<double>(k);
  std::size_t j = i + 1;
  for (; j + 4 <= n; j += 4) {
    const double* b = q.data() + j * k;
    double lane[4][4] = {};
    std::size_t t = 0;
    for (; t + 4 <= k; t += 4)
      for (std::size_t r = 0; r < 4; ++r)
        for (std::size_t l = 0; l < 4; ++l) lane[r][l] += std::abs(a[t + l] - b[r * k + t + l]);
    for (std::size_t r = 0; r < 4; ++r) {
      double s = (lane[r][0] + lane[r][1]) + (lane[r][2] + lane[r][3]);
      for (std::size_t u = t; u < k; ++u) s += std::abs(a[u] - b[r * k + u]);
      const auto ii = static_cast<Eigen::Index>(i), jj = static_cast<Eigen::Index>(j + r);
      d(ii, jj) = d(jj, ii) = s * scale;
    }
  }
  for (; j < n; ++j) {
    const auto ii = static_cast<Eigen::Index>(i), jj = static_cast<Eigen::Index>(j);
    d(ii, jj) = d(jj, ii) = wasserstein1_quantiles(a, q.data() + j * k, k);
  }
}

inline void check_quantile_matrix(const quantile_matrix& q) {
  if (q.rows() == 0 || q.cols() == 0) throw invalid_argument("w1_matrix: no quantile vectors");
  if (!q.allFinite()) throw domain_error("w1_matrix: quantile vectors contain NaN or infinity");
}

}  // namespace detail

/// W1 matrix of the quantile vectors in the rows of q.
inline Eigen::MatrixXd w1_matrix_quantiles(const quantile_matrix& q, unsigned threads = 1) {
  detail::check_quantile_matrix(q);
  const auto n = static_cast<std::size_t>(q.rows());
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(q.rows(), q.rows());
  detail::parallel_rows(n, threads, [&](std::size_t i) { detail::l1_row(q, i, d); });
  return d;
}

/// Exact W1 matrix of raw sample sets.
inline Eigen::MatrixXd w1_matrix_samples(const std::vector<std::vector<double>>& samples, unsigned threads = 1) {
  if (samples.empty()) throw invalid_argument("w1_matrix: no sample sets");
  std::vector<std::vector<double>> sorted(samples.size());
  detail::parallel_rows(samples.size(), threads, [&](std::size_t i) {
    detail::check_w1_sample(samples[i], nullptr, "a sample set");
    sorted[i] = samples[i];
    std::sort(sorted[i].begin(), sorted[i].end());
  });
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(n, n);
  detail::parallel_rows(samples.size(), threads, [&](std::size_t i) {
    for (std::size_t j = i + 1; j < sorted.size(); ++j) {
      const double w = wasserstein1_sorted(sorted[i].data(), sorted[i].size(), sorted[j].data(), sorted[j].size());
      d(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = w;
      d(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(i)) = w;
    }
  });
  return d;
}

/// Quantile vectors (K columns) of the reconstructed mixtures of `summaries`.
inline quantile_matrix quantile_vectors(const std::vector<distribution_summary>& summaries, std::size_t k = 256,
                                        bool truncated = false, unsigned threads = 1) {
  if (summaries.empty()) throw invalid_argument("quantile_vectors: no summaries");
  if (k == 0) throw invalid_argument("quantile_vectors: K must be >= 1");
  quantile_matrix q(static_cast<Eigen::Index>(summaries.size()), static_cast<Eigen::Index>(k));
  detail::parallel_rows(summaries.size(), threads, [&](std::size_t i) {
    const auto v = quantile_vector(lognormal_mixture::from_summary(summaries[i], truncated), k);
    std::copy(v.begin(), v.end(), q.data() + i * k);
  });
  return q;
}

/// W1 matrix of summarised distributions (reconstructed lognormal mixtures, K quantiles).
inline Eigen::MatrixXd w1_matrix_summaries(const std::vector<distribution_summary>& summaries, std::size_t k = 256,
                                           bool truncated = false, unsigned threads = 1) {
  return w1_matrix_quantiles(quantile_vectors(summaries, k, truncated, threads), threads);
}

/// One W1 matrix per group; groups[g] lists row indices of q (e.g. the ranks of a DP group).
inline std::vector<Eigen::MatrixXd> w1_matrices_within_groups(const quantile_matrix& q,
                                                              const std::vector<std::vector<int>>& groups,
                                                              unsigned threads = 1) {
  detail::check_quantile_matrix(q);
  std::vector<Eigen::MatrixXd> out(groups.size());
  detail::parallel_rows(groups.size(), threads, [&](std::size_t g) {
    const auto& members = groups[g];
    quantile_matrix sub(static_cast<Eigen::Index>(members.size()), q.cols());
    for (std::size_t r = 0; r < members.size(); ++r) {
      if (members[r] < 0 || members[r] >= q.rows())
        throw domain_error("w1_matrices_within_groups: row " + std::to_string(members[r]) + " outside [0, " +
                           std::to_string(q.rows()) + ")");
      sub.row(static_cast<Eigen::Index>(r)) = q.row(members[r]);
    }
    out[g] = members.empty() ? Eigen::MatrixXd() : w1_matrix_quantiles(sub, 1);
  });
  return out;
}

}  // namespace failslow::stats
