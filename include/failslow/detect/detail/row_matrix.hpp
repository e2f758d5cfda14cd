// failslow/detect/detail/row_matrix.hpp -- a dense row-major matrix and the Cholesky
// factorisation of a symmetric positive definite one: the storage and the solve behind the
// Mahalanobis detector's core (detect/mahalanobis_rows.hpp), which includes no Eigen.
//
// row_matrix<T>(rows, cols)      element (i, j) at data[i cols + j]; row(i) points at its cols values
// cholesky(a, l)                 a = l l^T with l lower triangular; false (l unspecified) when a pivot
//                                is not > 0 (a not positive definite, or NaN), as Eigen's LLT
// cholesky_log_det(l)            log det a = 2 sum log l_jj
// Complexity: O(p^3 / 3). Memory: the p x p factor.
// Accuracy: Cholesky is backward stable (Higham, Accuracy and Stability of Numerical Algorithms,
//   ch. 10): the computed l l^T equals a + E, |E| <= (p + 1) u |l| |l^T|.
// Errors: none; the caller checks the shapes.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace failslow::detect::detail {

template <class T>
struct row_matrix {
  std::size_t rows = 0, cols = 0;
  std::vector<T> data;

  row_matrix() = default;
  row_matrix(std::size_t r, std::size_t c, T fill = T{}) : rows(r), cols(c), data(r * c, fill) {}

  T& operator()(std::size_t i, std::size_t j) noexcept { return data[i * cols + j]; }
  const T& operator()(std::size_t i, std::size_t j) const noexcept { return data[i * cols + j]; }
  T* row(std::size_t i) noexcept { return data.data() + i * cols; }
  const T* row(std::size_t i) const noexcept { return data.data() + i * cols; }
};

template <class T>
bool cholesky(const row_matrix<T>& a, row_matrix<T>& l) {
  const std::size_t p = a.rows;
  l = row_matrix<T>(p, p);
  for (std::size_t j = 0; j < p; ++j) {
    T d = a(j, j);
    for (std::size_t k = 0; k < j; ++k) d -= l(j, k) * l(j, k);
    if (!(d > T(0))) return false;
    const T ljj = std::sqrt(d);
    l(j, j) = ljj;
    for (std::size_t i = j + 1; i < p; ++i) {
      T s = a(i, j);
      for (std::size_t k = 0; k < j; ++k) s -= l(i, k) * l(j, k);
      l(i, j) = s / ljj;
    }
  }
  return true;
}

template <class T>
T cholesky_log_det(const row_matrix<T>& l) {
  T s = 0;
  for (std::size_t j = 0; j < l.rows; ++j) s += 2 * std::log(l(j, j));
  return s;
}

}  // namespace failslow::detect::detail
