// ARGUS L2: in one step, which phase do the ranks disagree on, and which rank is the straggler?
// Also NVIDIA's straggler-detector score, for comparison.
//   ./example_detect_robust_scores
#include <Eigen/Dense>
#include <failslow/detect/robust_score.hpp>
#include <iostream>
#include <random>
#include <vector>

int main() {
  using namespace failslow::detect;
  const int ranks = 64;
  std::mt19937_64 rng(2);
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::MatrixXd phase_ms(ranks, 3);  // forward, backward, optimizer
  for (int r = 0; r < ranks; ++r) phase_ms.row(r) << 120 + g(rng), 240 + 2 * g(rng), 30 + 0.3 * g(rng);
  phase_ms(13, 1) *= 1.25;  // rank 13's backward is 25 % slower

  const auto cv = column_cv(phase_ms);
  const char* names[] = {"forward", "backward", "optimizer"};
  int worst = 0;
  for (int p = 0; p < 3; ++p) {
    std::cout << names[p] << ": CV " << cv[p] << '\n';
    if (cv[p] > cv[worst]) worst = p;
  }
  std::vector<double> col(phase_ms.col(worst).data(), phase_ms.col(worst).data() + ranks);
  const auto z = robust_z_outliers(col);  // modified z > 3.5, slower side
  for (std::size_t r : z.flagged)
    std::cout << "straggler in " << names[worst] << ": rank " << r << ", z " << z.z[r] << '\n';
  const auto nv = relative_performance_scores(col);  // fastest rank's median / this rank's
  std::cout << "NVIDIA relative score of rank 13: " << nv.scores[13]
            << " (flagged below 0.75: " << (nv.stragglers.empty() ? "none" : "yes") << ")\n";
}
