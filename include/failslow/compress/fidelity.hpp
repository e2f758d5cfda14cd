// failslow/compress/fidelity.hpp -- how faithful a kernel key's summary is to its exact durations.
//
// Synopsis
//   double relative_w1(summary, durations, quantiles = 1024, truncated = true)
//     = W1(F_summary, F_exact) / mean(durations)
//   F_summary is the key's lognormal mixture rebuilt from its clusters (window_summary.hpp,
//   stats/lognormal.hpp), F_exact the empirical distribution of the durations the summary was
//   made from; W1 is taken in the quantile form mean_k |Q_a(u_k) - Q_b(u_k)| at u_k = (k+1/2)/K
//   (stats/wasserstein.hpp), so the number is scale free: 0.01 means the reconstructed
//   distribution is on average 1 % of a mean duration away from the truth. This is the figure
//   the compression benchmarks and `failslow compress` report (median and p95 over keys).
// Accuracy: the quantile form's discretisation (wasserstein.hpp) is far below the reconstruction
//   error for K = 1024.
// Complexity: O(n log n + K) for n durations (a sort).
// Errors: empty durations, a summary without clusters, NaN/Inf or a non-positive mean throw
//   failslow::invalid_argument / failslow::domain_error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "failslow/compress/window_summary.hpp"
#include "failslow/core/error.hpp"
#include "failslow/stats/wasserstein.hpp"

namespace failslow::compress {

inline double relative_w1(const kernel_summary& summary, std::vector<double> durations, std::size_t quantiles = 1024,
                          bool truncated = true) {
  if (durations.empty()) throw invalid_argument("relative_w1: no durations");
  if (summary.clusters.empty()) throw invalid_argument("relative_w1: the summary has no clusters");
  if (quantiles == 0) throw invalid_argument("relative_w1: quantiles must be >= 1");
  double mean = 0;
  for (double d : durations) {
    if (!std::isfinite(d)) throw domain_error("relative_w1: a duration is NaN or infinite");
    mean += d;
  }
  mean /= static_cast<double>(durations.size());
  if (!(mean > 0)) throw domain_error("relative_w1: the mean duration must be positive");
  std::sort(durations.begin(), durations.end());
  const auto exact = stats::quantile_vector_sorted(durations.data(), durations.size(), quantiles);
  thread_local stats::quantile_grid grid(quantiles);  // one grid per K, not one per call
  if (grid.size() != quantiles) grid = stats::quantile_grid(quantiles);
  const auto rebuilt = stats::quantile_vector(summary.distribution(truncated), grid);
  return stats::wasserstein1_quantiles(exact, rebuilt) / mean;
}

}  // namespace failslow::compress
