// failslow/stats/w1_matrix_rows.hpp -- N x N Wasserstein-1 distance matrices of quantile vectors
// held in plain row-major arrays (no Eigen: stats/w1_matrix.hpp is the Eigen interface).
//
// Synopsis
//   q: n rows of k doubles, row-major (row i at q + i k), each a quantile vector at
//   u_t = (t + 1/2)/k (wasserstein.hpp's quantile_vector); W1(i, j) = sum_t |q_it - q_jt| / k,
//   as scipy's cdist(Q, Q, 'cityblock') / k.
//     w1_matrix_rows(q, n, k, out, threads)        out[i n + j] = W1(i, j): the full n x n
//                                                  matrix, symmetric, zero diagonal
//     w1_matrix_rows(Q, threads)                   the same from and to a dense_array<double, 2>
//     w1_condensed_rows<T>(q, n, k, out, threads)  the pairs i < j only, n (n - 1) / 2 entries
//                                                  in scipy pdist's order (condensed_index), T =
//                                                  double (the full matrix's entries) or float
//                                                  (those, rounded once): for 10^4+ rows, where
//                                                  faulting in n^2 doubles costs more than
//                                                  computing them
//   The upper triangle is cut into square tiles (rows of about 256 KiB each side, 128 rows at
//   k = 256) so the rows a tile streams stay in L2; inside a tile a register block of pairs
//   shares one pass over the columns: 4 x 4 pairs with AVX-512, 2 x 2 with AVX2, one pair with
//   SSE2, written with GCC/Clang vector extensions (plain lanes on other compilers). The path is
//   picked at run time from the CPU (stats/detail/simd_path.hpp), so a baseline x86-64 build
//   runs the AVX2 / AVX-512 kernels where the CPU has them. Each pair keeps l1_distance's eight
//   lanes and order of summation. Work is split over `threads` threads chosen by the caller
//   (core/parallel_for.hpp: 1 = the calling thread only, 0 = every core; tiles of the upper
//   triangle); there is no hidden thread pool.
// Complexity: O(n^2 k / 2) time; no memory beyond `out` and the tile list.
// Accuracy: every entry equal bit for bit to wasserstein1_quantiles (see wasserstein.hpp),
//   whatever the target, blocking or thread count (float: that value rounded once).
// Errors: n or k = 0, or a NaN/Inf in q, throw failslow::invalid_argument /
//   failslow::domain_error before anything is written; a path the CPU lacks (the tests' _on
//   variants) throws failslow::invalid_argument.
#pragma once

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
#include "failslow/core/dense_array.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/parallel_for.hpp"
#include "failslow/stats/detail/simd_path.hpp"
#include "failslow/stats/wasserstein.hpp"

namespace failslow::stats {

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
inline void l1_tile(const double* x, std::size_t k, std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1,
                    Put&& put) {
  constexpr std::size_t ra = l1_kernel<P>::ra, rb = l1_kernel<P>::rb;
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
inline void l1_pairs_on(const double* x, std::size_t n, std::size_t k, unsigned threads, Put& put) {
  const std::size_t rows = std::clamp<std::size_t>(32768 / k, 16, 256) / 8 * 8;
  std::vector<std::pair<std::size_t, std::size_t>> tiles;  // first rows of the two blocks
  for (std::size_t i0 = 0; i0 < n; i0 += rows)
    for (std::size_t j0 = i0; j0 < n; j0 += rows) tiles.emplace_back(i0, j0);
  parallel_for(tiles.size(), threads, [&](std::size_t t) {
    const auto [i0, j0] = tiles[t];
    l1_tile<P>(x, k, i0, std::min(i0 + rows, n), j0, std::min(j0 + rows, n), put);
  });
}

template <class Put>
inline void l1_pairs(const double* x, std::size_t n, std::size_t k, unsigned threads, simd_path path, Put&& put) {
  if (!simd_path_supported(path))
    throw invalid_argument(std::string("w1_matrix: this CPU lacks the ") + to_string(path) + " path");
  switch (path) {
#if defined(FAILSLOW_SIMD_DISPATCH)
    case simd_path::avx512:
      return l1_pairs_on<simd_path::avx512>(x, n, k, threads, put);
    case simd_path::avx2:
      return l1_pairs_on<simd_path::avx2>(x, n, k, threads, put);
#endif
    default:
      return l1_pairs_on<simd_path::baseline>(x, n, k, threads, put);
  }
}

FAILSLOW_FUNC void check_quantile_rows(const double* q, std::size_t n, std::size_t k);

}  // namespace detail

/// Position of the pair (i, j), i < j < n, in a condensed upper triangle: row by row, as
/// scipy.spatial.distance.pdist orders it.
constexpr std::size_t condensed_index(std::size_t n, std::size_t i, std::size_t j) noexcept {
  return n * i - i * (i + 1) / 2 + (j - i - 1);
}

namespace detail {
// w1_matrix_rows with the kernel of `path` (tests run each path the CPU has).
template <class = void>
inline void w1_matrix_rows_on(const double* q, std::size_t n, std::size_t k, double* out, unsigned threads,
                              simd_path path) {
  check_quantile_rows(q, n, k);
  const auto kd = static_cast<double>(k);
  for (std::size_t i = 0; i < n; ++i) out[i * n + i] = 0.0;  // the tiles write every entry off it
  l1_pairs(q, n, k, threads, path, [&](std::size_t i, std::size_t j, double l1) {
    out[i * n + j] = out[j * n + i] = l1 / kd;  // as wasserstein1_quantiles
  });
}

// w1_condensed_rows with the kernel of `path`.
template <class T>
void w1_condensed_rows_on(const double* q, std::size_t n, std::size_t k, T* out, unsigned threads, simd_path path) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>, "w1_condensed_rows: double or float");
  check_quantile_rows(q, n, k);
  const auto kd = static_cast<double>(k);
  l1_pairs(q, n, k, threads, path, [&](std::size_t i, std::size_t j, double l1) {
    out[condensed_index(n, i, j)] = static_cast<T>(l1 / kd);  // the full matrix's entry, then rounded
  });
}
}  // namespace detail

/// out[i n + j] = W1 between rows i and j of q (n rows of k quantiles, row-major); out holds
/// n x n doubles and may not overlap q.
template <class = void>
inline void w1_matrix_rows(const double* q, std::size_t n, std::size_t k, double* out, unsigned threads = 1) {
  detail::w1_matrix_rows_on(q, n, k, out, threads, detail::best_simd_path());
}

/// The W1 matrix of the rows of q (rows x quantiles).
template <class = void>
inline dense_array<double, 2> w1_matrix_rows(const dense_array<double, 2>& q, unsigned threads = 1) {
  const std::size_t n = q.shape(0), k = q.shape(1);
  dense_array<double, 2> d({n, n});  // w1_matrix_rows_on checks q before writing
  detail::w1_matrix_rows_on(q.data(), n, k, d.data(), threads, detail::best_simd_path());
  return d;
}

/// out[condensed_index(n, i, j)] = W1 between rows i < j of q, n (n - 1) / 2 entries, as double
/// (equal to the full matrix's entries) or float (those rounded to float).
template <class T = double>
void w1_condensed_rows(const double* q, std::size_t n, std::size_t k, T* out, unsigned threads = 1) {
  detail::w1_condensed_rows_on<T>(q, n, k, out, threads, detail::best_simd_path());
}

}  // namespace failslow::stats

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/impl/w1_matrix_rows.ipp"
#endif
