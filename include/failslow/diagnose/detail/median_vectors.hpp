// failslow/diagnose/detail/median_vectors.hpp -- the element-wise median of quantile vectors:
// a group's typical distribution, and each member's reference without itself.
//
// median_vector(rows, k, out)                   out[u] = median_i rows[i][u]
// leave_one_out_median_vectors(rows, k, out)    out[i k + u] = median_{j != i} rows[j][u]
// rows: n pointers to k values each (quantile vectors on one grid: their element-wise median is
// again a quantile function, the median distribution). L3 compares each rank's distribution with
// the median of the others' (l3_degraded.hpp): with the rank in its own reference, two ranks slow
// in one step pull a 4-rank group's median halfway and neither looks slow.
// Complexity: median_vector O(k n) (a selection per column); leave_one_out_median_vectors
// O(k n log n) (each column sorted once: without member i the middle of the others is the
// sorted column's middle, moved by one where i sits at or below it).
// Accuracy: exact (an even count averages its two middle values, as stats::median).
// Errors: none; n = 0 gives NaN rows (n = 1: leave-one-out has no others, NaN).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "failslow/stats/descriptive.hpp"

namespace failslow::diagnose::detail {

template <class = void>
inline void median_vector(const std::vector<const double*>& rows, std::size_t k, std::vector<double>& out) {
  out.assign(k, std::numeric_limits<double>::quiet_NaN());
  if (rows.empty()) return;
  std::vector<double> col(rows.size());
  for (std::size_t u = 0; u < k; ++u) {
    for (std::size_t i = 0; i < rows.size(); ++i) col[i] = rows[i][u];
    out[u] = stats::median(col);
  }
}

template <class = void>
inline void leave_one_out_median_vectors(const std::vector<const double*>& rows, std::size_t k,
                                         std::vector<double>& out) {
  const std::size_t n = rows.size();
  out.assign(n * k, std::numeric_limits<double>::quiet_NaN());
  if (n < 2) return;
  std::vector<std::pair<double, std::size_t>> col(n);
  std::vector<std::size_t> at(n);
  const std::size_t m = n - 1;  // values left
  for (std::size_t u = 0; u < k; ++u) {
    for (std::size_t i = 0; i < n; ++i) col[i] = {rows[i][u], i};
    std::sort(col.begin(), col.end());
    for (std::size_t j = 0; j < n; ++j) at[col[j].second] = j;
    for (std::size_t i = 0; i < n; ++i) {
      // the j-th smallest of the others is col[j] below member i's place, col[j + 1] from it on
      const auto other = [&](std::size_t j) { return col[j < at[i] ? j : j + 1].first; };
      out[i * k + u] = m % 2 ? other(m / 2) : (other(m / 2 - 1) + other(m / 2)) / 2;
    }
  }
}

}  // namespace failslow::diagnose::detail
