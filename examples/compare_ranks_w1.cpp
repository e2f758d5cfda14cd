// Which rank's kernel durations differ from its peers'? Wasserstein-1 distances between the
// ranks of one group, from raw samples and from compressed summaries; the same matrix without
// Eigen (stats/w1_matrix_rows.hpp, on a row-major dense_array).
//   ./example_compare_ranks_w1
#include <cmath>
#include <cstddef>
#include <failslow/core/dense_array.hpp>
#include <failslow/stats/quantile_grid.hpp>
#include <failslow/stats/summary.hpp>
#include <failslow/stats/w1_matrix.hpp>
#include <failslow/stats/w1_matrix_rows.hpp>
#include <iostream>
#include <random>
#include <vector>

int main() {
  namespace st = failslow::stats;
  constexpr int ranks = 8;
  std::mt19937_64 rng(7);
  std::vector<std::vector<double>> samples(ranks);
  std::vector<st::distribution_summary> summaries;
  for (int r = 0; r < ranks; ++r) {
    const double slowdown = r == 6 ? 1.15 : 1.0;  // rank 6 runs its attention kernel 15 % slower
    std::lognormal_distribution<double> d(std::log(25e3 * slowdown), 0.05);
    for (int i = 0; i < 5000; ++i) samples[static_cast<std::size_t>(r)].push_back(d(rng));
    summaries.push_back(st::summarize_clusters(samples[static_cast<std::size_t>(r)]));
  }
  const Eigen::MatrixXd exact = st::w1_matrix_samples(samples, /*threads=*/2);
  const Eigen::MatrixXd approx = st::w1_matrix_summaries(summaries, /*K=*/256, /*truncated=*/true, /*threads=*/2);

  // Without Eigen: one quantile vector per row of a ranks x K table, then its W1 matrix.
  const std::size_t n = ranks, K = 256;
  const st::quantile_grid grid(K);
  failslow::dense_array<double, 2> q({n, K});
  for (std::size_t r = 0; r < n; ++r)
    st::quantile_vector(st::lognormal_mixture::from_summary(summaries[r], /*truncated=*/true), grid, &q(r, 0));
  const failslow::dense_array<double, 2> rows = st::w1_matrix_rows(q, /*threads=*/2);
  bool same = true;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      same = same && rows(i, j) == approx(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
  std::cout << "W1 matrix without Eigen equal to the Eigen interface's: " << (same ? "yes" : "no") << "\n";

  // A rank's score: its median W1 to the others, in ns.
  for (int r = 0; r < ranks; ++r) {
    std::vector<double> e, a;
    for (int o = 0; o < ranks; ++o)
      if (o != r) {
        e.push_back(exact(r, o));
        a.push_back(approx(r, o));
      }
    std::cout << "rank " << r << ": median W1 " << st::median(e) << " ns (from summaries " << st::median(a) << " ns)\n";
  }
}
