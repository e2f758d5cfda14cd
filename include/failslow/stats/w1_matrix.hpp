// failslow/stats/w1_matrix.hpp -- N x N Wasserstein-1 distance matrices as Eigen matrices.
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
//   For 10^4+ rows, where faulting in the full N^2 doubles costs more than computing them:
//     w1_condensed_quantiles<T>(Q, threads)  the pairs i < j only, N (N - 1) / 2 entries in
//                                       scipy pdist's order (condensed_index(N, i, j)), T = double
//                                       (the full matrix's entries) or float (those, rounded)
//   and, for group-aware comparison at 10^4+ ranks where the full matrix is not wanted,
//     w1_matrices_within_groups(Q, groups, threads)  one small matrix per group of row
//                                       indices (e.g. the DP groups of core/topology.hpp).
//   The quantile form is stats/w1_matrix_rows.hpp's kernel (tiled, register-blocked, the SIMD
//   path picked at run time), on Q's row-major storage; this header is its Eigen interface and
//   the sample and summary forms. Work is split over `threads` threads chosen by the caller
//   (core/parallel_for.hpp: 1 = the calling thread only, 0 = every core; tiles of the quantile
//   form, rows otherwise); there is no hidden thread pool.
// Complexity: quantile form O(N^2 K / 2); samples O(N n log n + N^2 n / 2) for N sets of n.
// Accuracy: quantile form equal bit for bit to wasserstein1_quantiles (see wasserstein.hpp),
//   whatever the target, blocking or thread count (float: that value rounded once); samples exact.
// Errors: empty inputs, NaN/Inf, group indices out of range throw
//   failslow::invalid_argument / failslow::domain_error.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/parallel_for.hpp"
#include "failslow/stats/detail/simd_path.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/w1_matrix_rows.hpp"
#include "failslow/stats/wasserstein.hpp"

namespace failslow::stats {

/// Rows stored contiguously (row-major), one quantile vector per row.
using quantile_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace detail {
// w1_matrix_quantiles with the kernel of `path` (tests run each path the CPU has).
template <class = void>
inline Eigen::MatrixXd w1_matrix_quantiles_on(const quantile_matrix& q, unsigned threads, simd_path path) {
  const auto n = static_cast<std::size_t>(q.rows()), k = static_cast<std::size_t>(q.cols());
  // Symmetric: its column-major layout is the row-major one; w1_matrix_rows_on checks q first.
  Eigen::MatrixXd d(q.rows(), q.rows());
  w1_matrix_rows_on(q.data(), n, k, d.data(), threads, path);
  return d;
}

// w1_condensed_quantiles with the kernel of `path`.
template <class T>
Eigen::Matrix<T, Eigen::Dynamic, 1> w1_condensed_quantiles_on(const quantile_matrix& q, unsigned threads,
                                                              simd_path path) {
  const auto n = static_cast<std::size_t>(q.rows()), k = static_cast<std::size_t>(q.cols());
  Eigen::Matrix<T, Eigen::Dynamic, 1> c(static_cast<Eigen::Index>(n * (n - 1) / 2));  // every entry written
  w1_condensed_rows_on<T>(q.data(), n, k, c.data(), threads, path);
  return c;
}
}  // namespace detail

/// W1 matrix of the quantile vectors in the rows of q.
template <class = void>
inline Eigen::MatrixXd w1_matrix_quantiles(const quantile_matrix& q, unsigned threads = 1) {
  return detail::w1_matrix_quantiles_on(q, threads, detail::best_simd_path());
}

/// The upper triangle of w1_matrix_quantiles(q) without the diagonal, n (n - 1) / 2 entries in
/// condensed_index order (scipy's pdist layout), as double (equal to the full matrix's entries)
/// or float (those entries rounded to float): a half, or a quarter, of the full matrix's memory,
/// which at 10^4 rows and beyond costs more to fault in than to compute.
template <class T = double>
Eigen::Matrix<T, Eigen::Dynamic, 1> w1_condensed_quantiles(const quantile_matrix& q, unsigned threads = 1) {
  return detail::w1_condensed_quantiles_on<T>(q, threads, detail::best_simd_path());
}

/// Exact W1 matrix of raw sample sets.
template <class = void>
inline Eigen::MatrixXd w1_matrix_samples(const std::vector<std::vector<double>>& samples, unsigned threads = 1) {
  if (samples.empty()) throw invalid_argument("w1_matrix: no sample sets");
  std::vector<std::vector<double>> sorted(samples.size());
  parallel_for(samples.size(), threads, [&](std::size_t i) {
    detail::check_w1_sample(samples[i], nullptr, "a sample set");
    sorted[i] = samples[i];
    std::sort(sorted[i].begin(), sorted[i].end());
  });
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(n, n);
  parallel_for(samples.size(), threads, [&](std::size_t i) {
    for (std::size_t j = i + 1; j < sorted.size(); ++j) {
      const double w = wasserstein1_sorted(sorted[i].data(), sorted[i].size(), sorted[j].data(), sorted[j].size());
      d(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = w;
      d(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(i)) = w;
    }
  });
  return d;
}

/// Quantile vectors (K columns) of the reconstructed mixtures of `summaries`.
template <class = void>
inline quantile_matrix quantile_vectors(const std::vector<distribution_summary>& summaries, std::size_t k = 256,
                                        bool truncated = false, unsigned threads = 1) {
  if (summaries.empty()) throw invalid_argument("quantile_vectors: no summaries");
  if (k == 0) throw invalid_argument("quantile_vectors: K must be >= 1");
  quantile_matrix q(static_cast<Eigen::Index>(summaries.size()), static_cast<Eigen::Index>(k));
  const quantile_grid grid(k);
  parallel_for(summaries.size(), threads, [&](std::size_t i) {
    quantile_vector(lognormal_mixture::from_summary(summaries[i], truncated), grid, q.data() + i * k);
  });
  return q;
}

/// W1 matrix of summarised distributions (reconstructed lognormal mixtures, K quantiles).
template <class = void>
inline Eigen::MatrixXd w1_matrix_summaries(const std::vector<distribution_summary>& summaries, std::size_t k = 256,
                                           bool truncated = false, unsigned threads = 1) {
  return w1_matrix_quantiles(quantile_vectors(summaries, k, truncated, threads), threads);
}

/// One W1 matrix per group; groups[g] lists row indices of q (e.g. the ranks of a DP group).
template <class = void>
inline std::vector<Eigen::MatrixXd> w1_matrices_within_groups(const quantile_matrix& q,
                                                              const std::vector<std::vector<int>>& groups,
                                                              unsigned threads = 1) {
  detail::check_quantile_rows(q.data(), static_cast<std::size_t>(q.rows()), static_cast<std::size_t>(q.cols()));
  std::vector<Eigen::MatrixXd> out(groups.size());
  parallel_for(groups.size(), threads, [&](std::size_t g) {
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
