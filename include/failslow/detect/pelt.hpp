// failslow/detect/pelt.hpp -- exact penalised change-point search: PELT (Killick, Fearnhead &
// Eckley 2012) and the exhaustive optimal partitioning it prunes (Jackson et al. 2005).
//
// Synopsis
//   Both minimise  sum_j C(y[tau_j, tau_{j+1})) + m * beta  over every segmentation whose
//   segments have at least min_segment samples (costs, penalties: failslow/detect/segment_cost.hpp):
//     F(0) = -beta,   F(t) = min_{s admissible} F(s) + C(s, t) + beta,
//   s admissible for t when t - s >= min_segment and s = 0 or s >= min_segment.
//   optimal_partitioning(y, o)  every admissible s: O(n^2) cost evaluations; the reference.
//   pelt(y, o)                  drops s for good once F(s) + C(s, t) + K > F(t) (K: the cost's
//                               pruning constant). With a minimum segment length the comparison
//                               made at t removes s only from t + min_segment on, when t itself
//                               becomes admissible, which keeps the search exact. Same result as
//                               optimal_partitioning (ties go to the earliest last change in both).
//   A change point is the index of the first sample of a new segment.
//   False alarms on stationary noise (fraction of iid normal series in which any change is found,
//   measured by seeded simulation, 5000 series each; tests/test_changepoint.cpp checks them):
//                                               n = 200    n = 500
//     normal_mean, MBIC, sigma estimated         2.1 %      0.6 %
//     normal_mean, BIC,  sigma estimated         6.9 %      3.1 %
//     normal_mean, MBIC, sigma known             1.1 %      0.6 %
//     normal_meanvar, MBIC, min_segment 2        9.2 %      3.4 %   (short low-variance runs)
//     normal_meanvar, MBIC, min_segment 10       0.4 %      0.06 %
//   Localisation of planted mean shifts between segments of 100 (fraction within +-2 samples):
//   61 % at 1 sd, 84 % at 1.5 sd, 94 % at 2 sd, 99 % at 3 sd, 100 % at 5 sd.
// Complexity: PELT O(n) expected cost evaluations when the number of changes grows linearly with
//   n; O(n^2) when there is no change at all (nothing can be pruned then), like
//   optimal_partitioning always; memory O(n).
// Accuracy: the optimum is exact up to the rounding of the prefix-sum costs (segment_cost).
// Errors: those of segment_cost (empty series, NaN/Inf, bad options). A series shorter than
//   min_segment is one segment.
#pragma once

#include <cstddef>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/detect/segment_cost.hpp"

namespace failslow::detect {

namespace detail {

FAILSLOW_FUNC changepoint_result penalised_search(const segment_cost& cost, std::size_t m, bool prune);

}  // namespace detail

/// PELT: the exact penalised optimum with pruning.
template <class Range>
changepoint_result pelt(const Range& y, const changepoint_options& options = {}) {
  const segment_cost cost(y, options);
  return detail::penalised_search(cost, options.min_segment, /*prune=*/true);
}

/// Exhaustive optimal partitioning, O(n^2): the reference PELT must equal.
template <class Range>
changepoint_result optimal_partitioning(const Range& y, const changepoint_options& options = {}) {
  const segment_cost cost(y, options);
  return detail::penalised_search(cost, options.min_segment, /*prune=*/false);
}

}  // namespace failslow::detect

#if FAILSLOW_HEADER_ONLY
#include "failslow/detect/impl/pelt.ipp"
#endif
