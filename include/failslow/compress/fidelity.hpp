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
//
//   fidelity_figures         the relative W1 of many (window, key) pairs: add(summary, durations)
//                            measures one pair (a pair whose durations are all 0 is only counted:
//                            nothing to be relative to); median() and p95() are stats::quantile
//                            (numpy's linear default) of them, NaN when there are none.
//   add_trace_fidelity(figures, trace, window_of_event, windows)
//                            every (window, key) pair of `windows` (window id -> its summary,
//                            e.g. decoded back from .fsum) against the exact durations of the
//                            trace's events that summarize_trace (trace_windows.hpp) put in that
//                            window (window_of_event): what `failslow compress` checks a file by.
// Accuracy: the quantile form's discretisation (wasserstein.hpp) is far below the reconstruction
//   error for K = 1024.
// Complexity: O(n log n + K) for n durations (a sort); add_trace_fidelity O(E log W) for E
//   events and W windows, plus the sorts.
// Errors: empty durations, a summary without clusters, NaN/Inf or a non-positive mean throw
//   failslow::invalid_argument / failslow::domain_error; add_trace_fidelity throws
//   failslow::domain_error when a window lacks a key its events have, invalid_argument when
//   window_of_event does not match the trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "failslow/compress/window_summary.hpp"
#include "failslow/core/compile_mode.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::compress {

FAILSLOW_FUNC double relative_w1(const kernel_summary& summary, std::vector<double> durations,
                                 std::size_t quantiles = 1024, bool truncated = true);

/// The relative W1 of (window, key) pairs (see the synopsis).
struct fidelity_figures {
  std::vector<double> relative_w1;        ///< one per measured pair, in the order added
  std::uint64_t zero_duration_pairs = 0;  ///< pairs whose durations are all 0: counted, not measured

  /// Measures one pair: summary against the exact durations it was made from.
  FAILSLOW_FUNC void add(const kernel_summary& summary, std::vector<double> durations);
  /// The figures of another set of pairs added to these.
  void merge(const fidelity_figures& o) {
    relative_w1.insert(relative_w1.end(), o.relative_w1.begin(), o.relative_w1.end());
    zero_duration_pairs += o.zero_duration_pairs;
  }
  std::size_t pairs() const noexcept { return relative_w1.size() + zero_duration_pairs; }
  double median() const { return quantile(0.5); }
  double p95() const { return quantile(0.95); }
  /// stats::quantile of relative_w1 (linear); NaN when no pair was measured.
  double quantile(double p) const {
    return relative_w1.empty() ? std::numeric_limits<double>::quiet_NaN() : stats::quantile(relative_w1, p);
  }
};

/// Adds every (window, key) pair of `windows` (window id, summary; any order) measured against
/// the durations of the trace's events with that window id in window_of_event (one entry per
/// event, -1 for none: summarize_trace's output). Events of windows not listed are ignored.
/// `keys`: the per-event keys the trace was summarised under (trace_window_options::keys), if any.
FAILSLOW_FUNC void add_trace_fidelity(fidelity_figures& figures, const io::trace_data& trace,
                                      const std::vector<std::int64_t>& window_of_event,
                                      std::vector<std::pair<std::int64_t, const window_summary*>> windows,
                                      const std::vector<name_id>* keys = nullptr);

}  // namespace failslow::compress

#if FAILSLOW_HEADER_ONLY
#include "failslow/compress/impl/fidelity.ipp"
#endif
