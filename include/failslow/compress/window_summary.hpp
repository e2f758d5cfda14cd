// failslow/compress/window_summary.hpp -- what one rank's kernels did in one window.
//
// Synopsis
//   window_summary: rank, window id, time span and, per kernel key (an interned name id), the
//   exact event count and total duration plus the KDE-valley clusters of its durations, each a
//   stats::cluster_summary (count, sum, min, max, mean, variance, p50, p90, p99). This is what
//   the window compressor emits, the codec stores (a few bytes per key) and the diagnosis
//   compares across ranks (stats/lognormal.hpp rebuilds each key's distribution from it).
//   Counts and totals are exact; cluster quantiles are exact on the retained samples (all of
//   them up to the per-key cap, a uniform reservoir sample beyond it).
//   Two finer forms stand beside the clusters where they describe a key poorly (the clusters
//   are always there: the diagnosis reads their p50s and counts):
//     values  the durations themselves, ascending (a key of at most compressor_config::
//             exact_up_to launches): its distribution is exact.
//     knots   for a key no cluster fit describes (flat or spread over decades): its largest
//             durations exactly (in `values`, the top tenth up to top_values_limit: over
//             decades they carry most of the mean) and the quantiles of the others at
//             knot_probabilities (p = 0 and 1 are their min and max); between two knots the
//             CDF rises linearly in ln x (a log-uniform piece, stats/lognormal.hpp).
//   distribution() rebuilds the key from the finest form it has: values (point masses of
//   weight 1/n), knots (log-uniform pieces of weight (n - top) / n, the top values 1/n each;
//   n = sampled), else each cluster by stats::reconstruct_cluster
//   (the shape that best predicts its stored statistics), weights n_c / n. Keys with values,
//   knots or piecewise clusters are always truncated (their pieces mean nothing outside).
//   launch: the host's pace of kernel launches in the window, where the source sees the launch
//   calls (window_compressor::add_launch: the simulator's scale mode, traces compressed by
//   compress/trace_windows.hpp; the CUPTI collector records no runtime calls yet): their count
//   and the median time between consecutive ones, exact up to the
//   compressor's per_key_cap intervals (a uniform sample beyond). Not a kernel key, so sums
//   over `kernels` stay GPU time; launches = 0 where nothing was measured. A host that
//   launches slower than its peers' shows here before its GPU idles for it
//   (diagnose/l4_slow_host.hpp).
// Complexity: value type; find() is O(log keys) (kernels are kept sorted by key).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/event.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/summary.hpp"

namespace failslow::compress {

/// The probabilities of a key's knots (kernel_summary::knots): min, tails dense, max.
inline constexpr double knot_probabilities[] = {0,     0.002, 0.01, 0.025, 0.05, 0.1,   0.2,   0.3,
                                                0.4,   0.5,   0.6,  0.7,   0.75, 0.8,   0.85,  0.9,
                                                0.925, 0.95,  0.97, 0.98,  0.99, 0.995, 0.998, 1.0};
inline constexpr std::size_t knot_count = sizeof(knot_probabilities) / sizeof(knot_probabilities[0]);
/// At most this many largest durations kept exactly beside the knots.
inline constexpr std::size_t top_values_limit = 16;

/// One kernel key in one window.
struct kernel_summary {
  name_id key = 0;
  std::uint64_t count = 0;                       ///< events of this key in the window (exact)
  double total_ns = 0;                           ///< sum of their durations (exact)
  std::uint64_t sampled = 0;                     ///< durations behind the clusters (<= count)
  std::vector<stats::cluster_summary> clusters;  ///< ascending, non-empty clusters only
  std::vector<double> values;  ///< every duration, ascending (count <= exact_up_to); with knots the largest
  std::vector<double> knots;   ///< quantiles at knot_probabilities (a poor cluster fit), else empty

  /// The key's duration distribution as a mixture (see the synopsis for the forms).
  FAILSLOW_FUNC stats::lognormal_mixture distribution(bool truncated = true) const;
};

/// The host's kernel launch calls in one window (see the synopsis).
struct launch_summary {
  std::uint64_t launches = 0;     ///< launch calls seen in the window; 0: not measured
  double median_interval_ns = 0;  ///< median time between consecutive ones (launches >= 2), else 0

  bool measured() const noexcept { return launches >= 2 && median_interval_ns > 0; }
};

/// Why events were not added to a window (each event is either added or counted here).
struct skip_counts {
  std::uint64_t invalid_duration = 0;  ///< end < start, or a negative duration
  std::uint64_t invalid_key = 0;       ///< a key id above the configured limit
  std::uint64_t no_window = 0;         ///< events after close() of a finished stream

  std::uint64_t total() const noexcept { return invalid_duration + invalid_key + no_window; }
};

struct window_summary {
  std::int32_t rank = -1;
  std::uint64_t window_id = 0;
  std::int64_t start_ns = 0;            ///< first event start (or the window's opening mark)
  std::int64_t end_ns = 0;              ///< last event end (or the closing mark)
  std::vector<kernel_summary> kernels;  ///< sorted by key
  skip_counts skipped;                  ///< events of this window that were not added
  std::uint64_t subsampled = 0;         ///< added events represented by the reservoir only
  launch_summary launch;                ///< the host's launch calls, where the source sees them

  std::uint64_t event_count() const noexcept {
    std::uint64_t n = 0;
    for (const auto& k : kernels) n += k.count;
    return n;
  }

  const kernel_summary* find(name_id key) const noexcept {
    auto it = std::lower_bound(kernels.begin(), kernels.end(), key,
                               [](const kernel_summary& k, name_id id) { return k.key < id; });
    return it != kernels.end() && it->key == key ? &*it : nullptr;
  }
};

}  // namespace failslow::compress

#if FAILSLOW_HEADER_ONLY
#include "failslow/compress/impl/window_summary.ipp"
#endif
