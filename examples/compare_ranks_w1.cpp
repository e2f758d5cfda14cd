// Which rank's kernel durations differ from its peers'? Wasserstein-1 distances between the
// ranks of one group, from raw samples and from compressed summaries.
//   ./example_compare_ranks_w1
#include <cmath>
#include <failslow/stats/summary.hpp>
#include <failslow/stats/w1_matrix.hpp>
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
