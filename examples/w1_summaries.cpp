// W1 between summarised kernel-duration distributions, at scale: each rank's summary of one
// kernel becomes a quantile vector once (stats/quantile_grid.hpp, no root finding), then every
// pair costs one L1 distance (stats/w1_matrix.hpp); two single lognormals have a closed form.
//   ./example_w1_summaries
#include <cmath>
#include <cstdio>
#include <failslow/stats/quantile_grid.hpp>
#include <failslow/stats/w1_matrix.hpp>
#include <failslow/stats/wasserstein.hpp>
#include <vector>

int main() {
  namespace st = failslow::stats;
  // 8 ranks' summaries of one GEMM: two clusters each (two input shapes); rank 5 runs 8 % slower.
  std::vector<st::distribution_summary> ranks(8);
  for (std::size_t r = 0; r < ranks.size(); ++r)
    for (double median : {180e3, 420e3}) {
      const double m = median * (r == 5 ? 1.08 : 1.0) * (1 + 0.002 * static_cast<double>(r % 3));
      st::cluster_summary c;
      c.count = median < 200e3 ? 300 : 100;
      c.p50 = m;
      c.p99 = m * std::exp(0.02 * st::z_099);  // sigma 0.02
      c.min = m * std::exp(-3.2 * 0.02);
      c.max = m * std::exp(3.4 * 0.02);
      ranks[r].clusters.push_back(c);
    }
  const st::quantile_grid grid(256);  // shared by every vector
  st::quantile_matrix q(static_cast<Eigen::Index>(ranks.size()), 256);
  for (std::size_t r = 0; r < ranks.size(); ++r)
    st::quantile_vector(st::lognormal_mixture::from_summary(ranks[r], true), grid, q.data() + r * 256);
  const Eigen::MatrixXd d = st::w1_matrix_quantiles(q, 2);
  std::printf("W1 to rank 0 (us):");
  for (Eigen::Index r = 0; r < d.rows(); ++r) std::printf(" %.1f", d(0, r) / 1e3);
  std::printf("\n");

  // Two single lognormals: exact W1 in closed form (here the quantile functions cross).
  st::lognormal_component a, b;
  a.mu = std::log(20e3);
  a.sigma = 0.05;
  b.mu = std::log(20.5e3);
  b.sigma = 0.25;
  std::printf("W1(LN(ln 20us, 0.05), LN(ln 20.5us, 0.25)) = %.1f ns (closed form)\n", st::wasserstein1(a, b));
}
