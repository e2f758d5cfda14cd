// failslow/compress/merge.hpp -- merging window summaries: windows of one rank into a longer
// window, or ranks of one group into a group baseline.
//
// Synopsis
//   merge_windows(windows) -> one window_summary: per kernel key, counts and totals add; the
//   clusters of all inputs are pooled and clusters whose [min, max] ranges overlap are merged.
//   A merged cluster's count, sum, min, max, mean and variance are exact (pooled moments); its
//   p50, p90 and p99 are the quantiles of the truncated lognormal mixture of the clusters it
//   merged (stats/lognormal.hpp), the documented approximation: exact when a single cluster
//   is merged, otherwise as accurate as the reconstruction (bench/README.md measures W1 /
//   mean of 0.03-0.6 % for realistic kernels). A key's finer forms (window_summary.hpp): when
//   every input keeps all its durations (values) and they number at most merged_values_limit
//   together, the merged key keeps them all; otherwise, when any input has values or knots,
//   the merged key gets knots: the quantiles at knot_probabilities of the inputs'
//   distributions mixed by their counts (stats::lognormal_mixture::quantile), no top values.
//   Inputs of one rank keep that rank; inputs of
//   several ranks give rank -1 (a group baseline). The span is the union of the inputs'; the
//   window id is the first input's; skip and subsample counts add. Launch paces: the counts
//   add; the median interval is the median of the inputs' medians weighted by their intervals
//   (the exact median of the pooled intervals when the inputs' medians agree, within their
//   spread otherwise).
// Complexity: O(total clusters log total clusters) per key plus the quantile inversions.
// Errors: an empty input throws failslow::invalid_argument.
#pragma once

#include <vector>

#include "failslow/compress/window_summary.hpp"
#include "failslow/core/compile_mode.hpp"

namespace failslow::compress {

/// Merged keys keep all their durations up to this many (see the synopsis).
inline constexpr std::size_t merged_values_limit = 64;

FAILSLOW_FUNC window_summary merge_windows(const std::vector<window_summary>& windows);

}  // namespace failslow::compress

#if FAILSLOW_HEADER_ONLY
#include "failslow/compress/impl/merge.ipp"
#endif
