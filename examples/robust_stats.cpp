// Robust per-rank statistics: quantiles the way numpy computes them, MAD, and the modified
// z-scores that single out a slow rank.
//   ./example_robust_stats
#include <failslow/stats/descriptive.hpp>
#include <iostream>
#include <vector>

int main() {
  namespace st = failslow::stats;
  // Median step time (ms) of eight ranks of one data-parallel group; rank 5 is slow.
  const std::vector<double> step_ms = {412.1, 409.8, 411.5, 410.2, 412.9, 455.3, 410.7, 411.1};

  std::cout << "median " << st::median(step_ms) << " ms, MAD " << st::mad(step_ms) << " ms, p90 (numpy linear) "
            << st::quantile(step_ms, 0.9) << " ms, p90 (inverted CDF) "
            << st::quantile(step_ms, 0.9, st::quantile_method::inverted_cdf) << " ms\n";

  const std::vector<double> z = st::modified_z_scores(step_ms);
  for (std::size_t rank = 0; rank < z.size(); ++rank)
    if (z[rank] > 3.5) std::cout << "rank " << rank << " is an outlier: modified z = " << z[rank] << '\n';

  // Streaming moments merge across windows or threads without keeping the values.
  st::running_moments<double> window_a, window_b;
  for (std::size_t i = 0; i < 4; ++i) window_a.add(step_ms[i]);
  for (std::size_t i = 4; i < step_ms.size(); ++i) window_b.add(step_ms[i]);
  window_a.merge(window_b);
  std::cout << "mean " << window_a.mean() << " ms, sd " << window_a.stddev() << " ms over " << window_a.count()
            << " ranks\n";
}
