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
//   For 10^4+ rows, where faulting in the full N^2 doubles costs more than computing them:
//     w1_condensed_quantiles<T>(Q, threads)  the pairs i < j only, N (N - 1) / 2 entries in
//                                       scipy pdist's order (condensed_index(N, i, j)), T = double
//                                       (the full matrix's entries) or float (those, rounded)
//   and, for group-aware comparison at 10^4+ ranks where the full matrix is not wanted,
//     w1_matrices_within_groups(Q, groups, threads)  one small matrix per group of row
//                                       indices (e.g. the DP groups of core/topology.hpp).
//   Quantile form: the upper triangle is cut into square tiles (rows of about 256 KiB each side,
//   128 rows at K = 256) so the rows a tile streams stay in L2; inside a tile a register block
//   of pairs shares one pass over the columns: 4 x 4 pairs with AVX-512, 2 x 2 with AVX2, one
//   pair with SSE2, written with GCC/Clang vector extensions (plain lanes on other compilers).
//   The path is picked at run time from the CPU (stats/detail/simd_path.hpp), so a baseline
//   x86-64 build runs the AVX2 / AVX-512 kernels where the CPU has them. Each pair keeps
//   l1_distance's eight lanes and order of summation. Work is split over `threads` threads
//   chosen by the caller (core/parallel_for.hpp: 1 = the calling thread only, 0 = every core;
//   tiles of the quantile form, rows otherwise); there is no hidden thread pool.
// Complexity: quantile form O(N^2 K / 2); samples O(N n log n + N^2 n / 2) for N sets of n.
// Accuracy: quantile form equal bit for bit to wasserstein1_quantiles (see wasserstein.hpp),
//   whatever the target, blocking or thread count (float: that value rounded once); samples exact.
// Errors: empty inputs, NaN/Inf, group indices out of range throw
//   failslow::invalid_argument / failslow::domain_error.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/parallel_for.hpp"
#include "failslow/stats/detail/simd_path.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/wasserstein.hpp"

namespace failslow::stats {

/// Rows stored contiguously (row-major), one quantile vector per row.
using quantile_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace detail {

// ---- quantile form: register-blocked L1 distances -------------------------------------------
//
// Every pair is summed exactly as l1_distance (wasserstein.hpp) does it: lane l accumulates the
// columns t = l mod 8 in order, then the tail and the eight lanes are added in order. So each
// entry equals wasserstein1_quantiles bit for bit on every path and for any thread count or
// blocking. What changes with the path is only how many pairs share one pass over the columns.
#if defined(__GNUC__)
// GCC/Clang vector extensions of W doubles (no intrinsics: any target compiles them). GCC 12
// leaves plain double[RA][RB][8] accumulators in memory; arrays of vectors stay in registers
// (measured 2x faster). A block of RA x RB pairs loads RA + RB rows per column step; the shapes
// are the fastest measured that keep the accumulators in registers: W = 8 (AVX-512) 4 x 4, 16
// of 32 zmm accumulating; W = 4 (AVX, AVX2) 2 x 2, 8 of 16 ymm (larger blocks spill); W = 2
// (SSE2) one pair, larger blocks no faster.
template <std::size_t W>
struct l1_lanes;
template <>
struct l1_lanes<2> {
  typedef double vec __attribute__((vector_size(16)));
  typedef std::int64_t bits __attribute__((vector_size(16)));
};
template <>
struct l1_lanes<4> {
  typedef double vec __attribute__((vector_size(32)));
  typedef std::int64_t bits __attribute__((vector_size(32)));
};
template <>
struct l1_lanes<8> {
  typedef double vec __attribute__((vector_size(64)));
  typedef std::int64_t bits __attribute__((vector_size(64)));
};

// acc[r][s] += |a[r k + at ..] - b[s k + at ..]|, one vector of W lanes per pair.
template <std::size_t W, std::size_t RA, std::size_t RB>
__attribute__((always_inline)) inline void l1_step(const double* a, const double* b, std::size_t k, std::size_t at,
                                                   const typename l1_lanes<W>::bits& abs_mask,
                                                   typename l1_lanes<W>::vec (&acc)[RA][RB]) noexcept {
  using vec = typename l1_lanes<W>::vec;
  using bits = typename l1_lanes<W>::bits;
  vec va[RA], vb[RB];
  for (std::size_t r = 0; r < RA; ++r) std::memcpy(&va[r], a + r * k + at, sizeof(vec));
  for (std::size_t s = 0; s < RB; ++s) std::memcpy(&vb[s], b + s * k + at, sizeof(vec));
  for (std::size_t r = 0; r < RA; ++r)
    for (std::size_t s = 0; s < RB; ++s) acc[r][s] += (vec)((bits)(va[r] - vb[s]) & abs_mask);
}

// out[r][s] = sum_t |a[r k + t] - b[s k + t]| for RA rows a and RB rows b of k doubles, in
// vectors of W lanes. Always inlined: it takes the instruction set of the path that calls it.
// Narrower than eight lanes, a pair's eight lanes take 8 / W vectors. With AVX2 (W = 4) they are
// summed one vector at a time, in two passes over the columns, so only RA x RB accumulators are
// live (16-20 % faster than both at once, measured); SSE2 (W = 2) is faster with all four at
// once. Each lane's sum keeps its order either way.
template <std::size_t W, std::size_t RA, std::size_t RB>
__attribute__((always_inline)) inline void l1_block(const double* a, const double* b, std::size_t k,
                                                    double (&out)[RA][RB]) noexcept {
  using vec = typename l1_lanes<W>::vec;
  using bits = typename l1_lanes<W>::bits;
  constexpr std::size_t per_lane8 = 8 / W;  // vectors per pair holding its eight lanes
  bits abs_mask;                            // clears the sign bit: |x| without a branch
  for (std::size_t l = 0; l < W; ++l) abs_mask[l] = std::numeric_limits<std::int64_t>::max();
  const std::size_t k8 = k / 8 * 8;
  double lanes[RA][RB][8];
  if constexpr (W == 2) {  // all four vectors of a pair in one pass
    vec acc[per_lane8][RA][RB] = {};
    for (std::size_t t = 0; t < k8; t += 8)
      for (std::size_t v = 0; v < per_lane8; ++v) l1_step<W, RA, RB>(a, b, k, t + v * W, abs_mask, acc[v]);
    for (std::size_t v = 0; v < per_lane8; ++v)
      for (std::size_t r = 0; r < RA; ++r)
        for (std::size_t s = 0; s < RB; ++s)
          for (std::size_t l = 0; l < W; ++l) lanes[r][s][v * W + l] = acc[v][r][s][l];
  } else {  // one vector of each pair per pass over the columns
    for (std::size_t v = 0; v < per_lane8; ++v) {
      vec acc[RA][RB] = {};
      for (std::size_t t = v * W; t < k8; t += 8) l1_step<W, RA, RB>(a, b, k, t, abs_mask, acc);
      for (std::size_t r = 0; r < RA; ++r)
        for (std::size_t s = 0; s < RB; ++s)
          for (std::size_t l = 0; l < W; ++l) lanes[r][s][v * W + l] = acc[r][s][l];
    }
  }
  for (std::size_t r = 0; r < RA; ++r)
    for (std::size_t s = 0; s < RB; ++s) {
      double sum = 0;
      for (std::size_t u = k8; u < k; ++u) sum += std::abs(a[r * k + u] - b[s * k + u]);
      for (std::size_t l = 0; l < 8; ++l) sum += lanes[r][s][l];
      out[r][s] = sum;
    }
}
// The baseline path: the width the build targets.
#if defined(__AVX512F__)
inline constexpr std::size_t l1_width = 8, l1_rows_a = 4, l1_rows_b = 4;
#elif defined(__AVX__)
inline constexpr std::size_t l1_width = 4, l1_rows_a = 2, l1_rows_b = 2;
#else
inline constexpr std::size_t l1_width = 2, l1_rows_a = 1, l1_rows_b = 1;
#endif
#else
// Other compilers: one pair at a time (l1_distance's eight lanes vectorise on their own).
inline constexpr std::size_t l1_width = 1, l1_rows_a = 1, l1_rows_b = 1;
template <std::size_t W, std::size_t RA, std::size_t RB>
inline void l1_block(const double* a, const double* b, std::size_t k, double (&out)[RA][RB]) noexcept {
  for (std::size_t r = 0; r < RA; ++r)
    for (std::size_t s = 0; s < RB; ++s) out[r][s] = l1_distance(a + r * k, b + s * k, k);
}
#endif

// The register block of each path: ra x rb pairs, computed by block().
template <simd_path P>
struct l1_kernel {  // baseline: what the build targets
  static constexpr std::size_t ra = l1_rows_a, rb = l1_rows_b;
  static void block(const double* a, const double* b, std::size_t k, double (&out)[ra][rb]) noexcept {
    l1_block<l1_width, ra, rb>(a, b, k, out);
  }
};
#if defined(FAILSLOW_SIMD_DISPATCH)
template <>
struct l1_kernel<simd_path::avx2> {
  static constexpr std::size_t ra = 2, rb = 2;
  __attribute__((target("avx2"))) static void block(const double* a, const double* b, std::size_t k,
                                                    double (&out)[ra][rb]) noexcept {
    l1_block<4, ra, rb>(a, b, k, out);
  }
};
template <>
struct l1_kernel<simd_path::avx512> {
  static constexpr std::size_t ra = 4, rb = 4;
  __attribute__((target("avx512f,avx512dq"))) static void block(const double* a, const double* b, std::size_t k,
                                                                double (&out)[ra][rb]) noexcept {
    l1_block<8, ra, rb>(a, b, k, out);
  }
};
#endif

// The L1 distance of the pairs i < j with i in [i0, i1) and j in [j0, j1), each handed to
// put(i, j, l1) once. Each group of rb later rows stays in L1 while the tile's earlier rows
// stream past from L2; blocks that cross the diagonal or the tile's edge go pair by pair.
template <simd_path P, class Put>
inline void l1_tile(const quantile_matrix& q, std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1,
                    Put&& put) {
  constexpr std::size_t ra = l1_kernel<P>::ra, rb = l1_kernel<P>::rb;
  const auto k = static_cast<std::size_t>(q.cols());
  const double* x = q.data();
  for (std::size_t jb = j0; jb < j1; jb += rb) {
    const std::size_t je = std::min(jb + rb, j1);
    for (std::size_t ib = i0; ib < i1 && ib + 1 < je; ib += ra) {
      const std::size_t ie = std::min(ib + ra, i1);
      if (ie - ib == ra && je - jb == rb && ie <= jb) {
        double l1[ra][rb];
        l1_kernel<P>::block(x + ib * k, x + jb * k, k, l1);
        for (std::size_t r = 0; r < ra; ++r)
          for (std::size_t s = 0; s < rb; ++s) put(ib + r, jb + s, l1[r][s]);
      } else {
        for (std::size_t i = ib; i < ie; ++i)
          for (std::size_t j = std::max(jb, i + 1); j < je; ++j) put(i, j, l1_distance(x + i * k, x + j * k, k));
      }
    }
  }
}

// put(i, j, l1) for every pair i < j of rows of q, over square tiles of the upper triangle (each
// pair in exactly one) on `threads` threads, with the kernel of `path`. A tile's rows take about
// 256 KiB (128 rows at K = 256), so the rows a tile streams stay in L2; a multiple of 8 rows
// keeps every register block inside a tile.
template <simd_path P, class Put>
inline void l1_pairs_on(const quantile_matrix& q, unsigned threads, Put& put) {
  const auto n = static_cast<std::size_t>(q.rows()), k = static_cast<std::size_t>(q.cols());
  const std::size_t rows = std::clamp<std::size_t>(32768 / k, 16, 256) / 8 * 8;
  std::vector<std::pair<std::size_t, std::size_t>> tiles;  // first rows of the two blocks
  for (std::size_t i0 = 0; i0 < n; i0 += rows)
    for (std::size_t j0 = i0; j0 < n; j0 += rows) tiles.emplace_back(i0, j0);
  parallel_for(tiles.size(), threads, [&](std::size_t t) {
    const auto [i0, j0] = tiles[t];
    l1_tile<P>(q, i0, std::min(i0 + rows, n), j0, std::min(j0 + rows, n), put);
  });
}

template <class Put>
inline void l1_pairs(const quantile_matrix& q, unsigned threads, simd_path path, Put&& put) {
  if (!simd_path_supported(path))
    throw invalid_argument(std::string("w1_matrix: this CPU lacks the ") + to_string(path) + " path");
  switch (path) {
#if defined(FAILSLOW_SIMD_DISPATCH)
    case simd_path::avx512:
      return l1_pairs_on<simd_path::avx512>(q, threads, put);
    case simd_path::avx2:
      return l1_pairs_on<simd_path::avx2>(q, threads, put);
#endif
    default:
      return l1_pairs_on<simd_path::baseline>(q, threads, put);
  }
}

FAILSLOW_INLINE void check_quantile_matrix(const quantile_matrix& q);

}  // namespace detail

namespace detail {
// w1_matrix_quantiles with the kernel of `path` (tests run each path the CPU has).
template <class = void>
inline Eigen::MatrixXd w1_matrix_quantiles_on(const quantile_matrix& q, unsigned threads, simd_path path) {
  check_quantile_matrix(q);
  const auto k = static_cast<double>(q.cols());
  Eigen::MatrixXd d(q.rows(), q.rows());  // the tiles write every entry off the diagonal
  d.diagonal().setZero();
  l1_pairs(q, threads, path, [&](std::size_t i, std::size_t j, double l1) {
    const auto ii = static_cast<Eigen::Index>(i), jj = static_cast<Eigen::Index>(j);
    d(ii, jj) = d(jj, ii) = l1 / k;  // as wasserstein1_quantiles
  });
  return d;
}
}  // namespace detail

/// W1 matrix of the quantile vectors in the rows of q.
template <class = void>
inline Eigen::MatrixXd w1_matrix_quantiles(const quantile_matrix& q, unsigned threads = 1) {
  return detail::w1_matrix_quantiles_on(q, threads, detail::best_simd_path());
}

/// Position of the pair (i, j), i < j < n, in a condensed upper triangle: row by row, as
/// scipy.spatial.distance.pdist orders it.
constexpr std::size_t condensed_index(std::size_t n, std::size_t i, std::size_t j) noexcept {
  return n * i - i * (i + 1) / 2 + (j - i - 1);
}

namespace detail {
// w1_condensed_quantiles with the kernel of `path`.
template <class T>
Eigen::Matrix<T, Eigen::Dynamic, 1> w1_condensed_quantiles_on(const quantile_matrix& q, unsigned threads,
                                                              simd_path path) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>, "w1_condensed_quantiles: double or float");
  check_quantile_matrix(q);
  const auto n = static_cast<std::size_t>(q.rows());
  const auto k = static_cast<double>(q.cols());
  Eigen::Matrix<T, Eigen::Dynamic, 1> c(static_cast<Eigen::Index>(n * (n - 1) / 2));  // every entry written
  T* out = c.data();
  l1_pairs(q, threads, path, [&](std::size_t i, std::size_t j, double l1) {
    out[condensed_index(n, i, j)] = static_cast<T>(l1 / k);  // the full matrix's entry, then rounded
  });
  return c;
}
}  // namespace detail

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
  detail::check_quantile_matrix(q);
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

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/impl/w1_matrix.ipp"
#endif
