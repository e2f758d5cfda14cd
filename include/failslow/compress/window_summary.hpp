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
// Complexity: value type; find() is O(log keys) (kernels are kept sorted by key).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "failslow/core/event.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/summary.hpp"

namespace failslow::compress {

/// One kernel key in one window.
struct kernel_summary {
  name_id key = 0;
  std::uint64_t count = 0;                       ///< events of this key in the window (exact)
  double total_ns = 0;                           ///< sum of their durations (exact)
  std::uint64_t sampled = 0;                     ///< durations behind the clusters (<= count)
  std::vector<stats::cluster_summary> clusters;  ///< ascending, non-empty clusters only

  /// The key's duration distribution as a lognormal mixture (weights n_c / n).
  stats::lognormal_mixture distribution(bool truncated = true) const {
    stats::distribution_summary s;
    s.clusters = clusters;
    return stats::lognormal_mixture::from_summary(s, truncated);
  }
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
