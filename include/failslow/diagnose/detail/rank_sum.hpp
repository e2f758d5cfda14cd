// failslow/diagnose/detail/rank_sum.hpp -- the rank-sum (Mann-Whitney) test of the diagnosis:
//   rank_sum_upper_p(before, after)   one-sided p-value that `after` is stochastically larger
//                                     than `before`: whether a rank's excess over its peers rose
//                                     at a step and stayed up (a change), or did not
//
// U = (sum of the ranks of `after` in the pooled sample, ties at their mean rank)
//     - n_a (n_a + 1) / 2; z = (U - n_b n_a / 2 - 1/2) / sigma, with
// sigma^2 = n_b n_a / 12 ((N + 1) - sum over ties (t^3 - t) / (N (N - 1))); p = 1 - Phi(z).
// That is scipy.stats.mannwhitneyu(after, before, alternative="greater", method="asymptotic",
// use_continuity=True), to which tests/reference/gen_diagnose_fixtures.py checks it (1e-9
// relative); the normal approximation itself is good to about 1e-3 absolute from n_b, n_a >= 8.
// Complexity: O(N log N), N = n_b + n_a. Errors: none; 1 when either sample is empty or every
// value is tied. NaNs are the caller's to leave out.
#pragma once

#include <cstddef>

#include "failslow/core/compile_mode.hpp"

namespace failslow::diagnose::detail {

FAILSLOW_FUNC double rank_sum_upper_p(const double* before, std::size_t n_before, const double* after,
                                      std::size_t n_after);

}  // namespace failslow::diagnose::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/detail/impl/rank_sum.ipp"
#endif
