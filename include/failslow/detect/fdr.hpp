// failslow/detect/fdr.hpp -- false discovery rate control over many simultaneous tests
// (thousands of ranks x hundreds of kernels), so a 10,000-rank job does not drown in alarms.
//
// Synopsis
//   m p-values p_1..p_m, sorted p_(1) <= ... <= p_(m).
//   fdr_method::benjamini_hochberg (1995): reject H_(1)..H_(k), k = max{ i : p_(i) <= i q / m };
//     controls the FDR at q for independent or positively dependent (PRDS) tests.
//   fdr_method::benjamini_yekutieli (2001): the same with q / c(m), c(m) = sum_{i=1..m} 1/i;
//     controls the FDR at q under any dependence.
//   Adjusted p-values (scipy.stats.false_discovery_control, R p.adjust): for the i-th smallest,
//     p~_(i) = min_{j >= i} min(1, c p_(j) m / j)   (c = 1 for BH, c(m) for BY);
//   H_i is rejected at level q exactly when p~_i <= q.
//   false_discovery_control(p, q, method) returns the adjusted p-values (input order), the
//   rejected indices (ascending) and the largest rejected raw p-value.
// Complexity: O(m log m) (one sort), O(m) memory.
// Accuracy: adjusted p-values are one multiplication and a running minimum (exact to rounding).
// Errors: an empty input throws failslow::invalid_argument; a p-value that is NaN or outside
//   [0, 1] throws failslow::domain_error; q outside (0, 1] throws failslow::invalid_argument.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"

namespace failslow::detect {

enum class fdr_method : std::uint8_t { benjamini_hochberg, benjamini_yekutieli };
/// Number of fdr_method values (they are 0 .. fdr_method_count - 1).
inline constexpr std::size_t fdr_method_count = 2;

struct fdr_result {
  std::vector<double> adjusted;       ///< adjusted p-value per test, input order
  std::vector<std::size_t> rejected;  ///< tests rejected at q, ascending index
  double p_threshold = 0.0;           ///< largest raw p-value rejected (0 when none)
};

/// Adjusted p-values (input order).
template <class Range>
std::vector<double> adjust_p_values(const Range& p_values, fdr_method method = fdr_method::benjamini_hochberg) {
  std::vector<double> p;
  for (const auto& v : p_values) p.push_back(static_cast<double>(v));
  const std::size_t m = p.size();
  if (m == 0) throw invalid_argument("adjust_p_values: no p-values");
  for (double v : p)
    if (!(v >= 0.0 && v <= 1.0))
      throw domain_error("adjust_p_values: p-value " + std::to_string(v) + " outside [0, 1]");
  double c = 1.0;
  if (method == fdr_method::benjamini_yekutieli) {
    c = 0.0;
    for (std::size_t i = m; i >= 1; --i) c += 1.0 / static_cast<double>(i);  // small terms first
  }
  // (p, index) pairs sort contiguously; the index breaks ties, so equal p-values keep input order.
  std::vector<std::pair<double, std::size_t>> sorted(m);
  for (std::size_t i = 0; i < m; ++i) sorted[i] = {p[i], i};
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> adj(m);
  double running = 1.0;
  const double md = static_cast<double>(m);
  for (std::size_t r = m; r >= 1; --r) {
    const auto& [pv, i] = sorted[r - 1];
    running = std::min(running, std::min(1.0, c * pv * md / static_cast<double>(r)));
    adj[i] = running;
  }
  return adj;
}

/// Benjamini-Hochberg (or -Yekutieli) at FDR level q.
template <class Range>
fdr_result false_discovery_control(const Range& p_values, double q = 0.05,
                                   fdr_method method = fdr_method::benjamini_hochberg) {
  if (!(q > 0.0 && q <= 1.0)) throw invalid_argument("false_discovery_control: q must be in (0, 1]");
  fdr_result r;
  r.adjusted = adjust_p_values(p_values, method);
  std::size_t i = 0;
  for (const auto& v : p_values) {
    if (r.adjusted[i] <= q) {
      r.rejected.push_back(i);
      r.p_threshold = std::max(r.p_threshold, static_cast<double>(v));
    }
    ++i;
  }
  return r;
}

}  // namespace failslow::detect
