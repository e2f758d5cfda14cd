// failslow/detect/detail/symmetric_eigen.hpp -- eigenvalues and eigenvectors of a real symmetric
// matrix by the cyclic Jacobi method: the Mahalanobis detector's whitening without Eigen's
// Eigenvalues module (whose parse cost every file that includes the diagnosis, issue 22).
//
// symmetric_eigen(a) -> {values ascending, vectors: column i (vectors(., i)) the unit eigenvector
//   of values[i]}, a = V diag(values) V^T.
// Method: sweeps of plane rotations over every pair p < q, each zeroing a_pq (Golub & Van Loan,
//   Matrix Computations, 4th ed., 8.5; the update in Rutishauser's form). A pair is skipped once
//   |a_pq| <= u sqrt(|a_pp a_qq|) (u = machine epsilon; Demmel & Veselic 1992): the sweeps stop
//   when none rotates, after 6-10 sweeps on the covariance matrices the detector meets
//   (convergence is quadratic), at most 64.
// Complexity: O(p^3) per sweep. Memory: two p x p matrices.
// Accuracy: backward stable, |lambda_i - computed_i| = O(p u ||a||_2); on a positive definite a
//   every eigenvalue has a small relative error, O(p u kappa(D^-1/2 a D^-1/2)) with D = diag(a)
//   (Demmel & Veselic), so the small eigenvalues the detector inverts are not lost to rounding.
//   tests/test_mahalanobis.cpp checks values and vectors against Eigen's SelfAdjointEigenSolver.
// Errors: none; a must be square (its upper triangle is read, as a symmetric matrix).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

#include "failslow/detect/detail/row_matrix.hpp"

namespace failslow::detect::detail {

template <class T>
struct eigen_decomposition {
  std::vector<T> values;
  row_matrix<T> vectors;
};

template <class T>
eigen_decomposition<T> symmetric_eigen(const row_matrix<T>& in) {
  const std::size_t n = in.rows;
  row_matrix<T> a(n, n), v(n, n);
  for (std::size_t i = 0; i < n; ++i) {
    v(i, i) = 1;
    for (std::size_t j = i; j < n; ++j) a(i, j) = a(j, i) = in(i, j);
  }
  const T eps = std::numeric_limits<T>::epsilon();
  // Rotating rows/columns p and q by (c, s): x_p' = c x_p - s x_q, x_q' = s x_p + c x_q, written
  // with tau = s / (1 + c) so that a small rotation changes them by small amounts.
  auto rotate = [](T& xp, T& xq, T s, T tau) {
    const T g = xp, h = xq;
    xp = g - s * (h + g * tau);
    xq = h + s * (g - h * tau);
  };
  for (int sweep = 0; sweep < 64; ++sweep) {
    bool rotated = false;
    for (std::size_t p = 0; p + 1 < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) {
        const T apq = a(p, q);
        if (apq == T(0)) continue;
        if (std::fabs(apq) <= eps * std::sqrt(std::fabs(a(p, p) * a(q, q)))) {
          a(p, q) = a(q, p) = 0;
          continue;
        }
        rotated = true;
        const T theta = (a(q, q) - a(p, p)) / (2 * apq);
        // t = tan of the angle, the smaller root of t^2 + 2 theta t - 1 = 0
        T t =
            std::fabs(theta) > T(1e150) ? T(1) / (2 * theta) : T(1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        if (theta < 0 && std::fabs(theta) <= T(1e150)) t = -t;
        const T c = T(1) / std::sqrt(t * t + 1), s = t * c, tau = s / (1 + c);
        a(p, p) -= t * apq;
        a(q, q) += t * apq;
        a(p, q) = a(q, p) = 0;
        for (std::size_t k = 0; k < n; ++k) {
          if (k != p && k != q) {
            rotate(a(k, p), a(k, q), s, tau);
            a(p, k) = a(k, p);
            a(q, k) = a(k, q);
          }
          rotate(v(k, p), v(k, q), s, tau);
        }
      }
    if (!rotated) break;
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return a(x, x) < a(y, y); });
  eigen_decomposition<T> r;
  r.values.resize(n);
  r.vectors = row_matrix<T>(n, n);
  for (std::size_t i = 0; i < n; ++i) {
    r.values[i] = a(order[i], order[i]);
    for (std::size_t k = 0; k < n; ++k) r.vectors(k, i) = v(k, order[i]);
  }
  return r;
}

}  // namespace failslow::detect::detail
