// 4096 ranks x 50 kernels = 204,800 simultaneous tests: Benjamini-Hochberg keeps the false
// discoveries at 5 % of the findings instead of ~10,000 raw alarms at p < 0.05.
//   ./example_detect_fdr
#include <failslow/detect/fdr.hpp>
#include <iostream>
#include <random>
#include <vector>

int main() {
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> p(4096 * 50);
  for (double& x : p) x = u(rng);                                       // healthy (rank, kernel) pairs
  for (std::size_t k = 0; k < 50; ++k) p[13 * 50 + k] = 1e-9 * u(rng);  // rank 13 is slow in every kernel
  std::size_t raw = 0;
  for (double x : p) raw += x < 0.05 ? 1 : 0;
  const auto bh = failslow::detect::false_discovery_control(p, 0.05);
  std::cout << raw << " raw alarms at p < 0.05; " << bh.rejected.size()
            << " after Benjamini-Hochberg (p <= " << bh.p_threshold << ")\n";
  std::size_t rank13 = 0;
  for (std::size_t i : bh.rejected) rank13 += i / 50 == 13 ? 1 : 0;
  std::cout << rank13 << " of them on rank 13\n";
}
