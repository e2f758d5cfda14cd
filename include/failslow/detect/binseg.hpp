// failslow/detect/binseg.hpp -- binary segmentation (Scott & Knott 1974; Vostrikova 1981):
// greedy, approximate, fast change-point search with the costs and penalties of segment_cost.
//
// Synopsis
//   Start from the whole series. For a segment [b, e) the best split k (both parts at least
//   min_segment long) maximises the gain G = C(b, e) - C(b, k) - C(k, e). Among all segments
//   the split with the largest gain is taken while G > beta and fewer than max_changes change
//   points were taken; both halves are then examined in turn.
//   The result is not always the penalised optimum (use pelt for that), but the splits it does
//   take are the strongest single changes first, and max_changes bounds the work.
// Complexity: O(n log n) cost evaluations for balanced splits, O(n * changes) worst case;
//   memory O(n).
// Errors: those of segment_cost; max_changes = 0 returns one segment.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

#include "failslow/detect/segment_cost.hpp"

namespace failslow::detect {

template <class Range>
changepoint_result binary_segmentation(const Range& y, const changepoint_options& options = {}) {
  const segment_cost cost(y, options);
  const std::size_t m = options.min_segment;
  struct split {
    double gain;
    std::size_t begin, end, at;
    bool operator<(const split& o) const noexcept { return gain < o.gain || (gain == o.gain && at > o.at); }
  };
  std::uint64_t evals = 0;
  std::priority_queue<split> heap;
  auto examine = [&](std::size_t b, std::size_t e) {
    if (e - b < 2 * m) return;
    const double whole = cost(b, e);
    split best{-1.0, b, e, 0};
    for (std::size_t k = b + m; k + m <= e; ++k) {
      const double g = whole - cost(b, k) - cost(k, e);
      if (g > best.gain) {
        best.gain = g;
        best.at = k;
      }
    }
    evals += 1 + 2 * (e - b - 2 * m + 1);
    if (best.at != 0 && best.gain > cost.beta()) heap.push(best);
  };
  examine(0, cost.size());
  std::vector<std::size_t> changes;
  while (!heap.empty() && changes.size() < options.max_changes) {
    const split s = heap.top();
    heap.pop();
    changes.push_back(s.at);
    examine(s.begin, s.at);
    examine(s.at, s.end);
  }
  std::sort(changes.begin(), changes.end());
  return cost.make_result(std::move(changes), evals);
}

}  // namespace failslow::detect
