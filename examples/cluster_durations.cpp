// Cluster a kernel's durations at the valleys of their density, summarise each cluster, and
// rebuild the distribution from the summary (what the window compressor stores).
//   ./example_cluster_durations
#include <cmath>
#include <failslow/stats/lognormal.hpp>
#include <failslow/stats/summary.hpp>
#include <failslow/stats/valleys.hpp>
#include <iostream>
#include <random>
#include <vector>

int main() {
  namespace st = failslow::stats;
  // A GEMM that runs ~20 us, and ~32 us when its inputs are cold (25 % of launches).
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> warm(std::log(20e3), 0.04), cold(std::log(32e3), 0.05);
  std::vector<double> durations_ns;
  for (int i = 0; i < 20000; ++i) durations_ns.push_back(i % 4 ? warm(rng) : cold(rng));

  // Defaults: log space, bandwidth 1.06 s n^-1/5, 1024-point grid.
  const st::valley_clustering c = st::find_valleys(durations_ns);
  std::cout << c.cluster_count() << " clusters, bandwidth " << c.density.bandwidth << " (log units), boundary at";
  for (double b : c.boundaries) std::cout << ' ' << b << " ns";
  std::cout << '\n';

  const st::distribution_summary s = st::summarize(durations_ns.begin(), durations_ns.end(), c.boundaries);
  for (const auto& k : s.clusters)
    std::cout << "  n=" << k.count << " p50=" << k.p50 << " p99=" << k.p99 << " mean=" << k.mean << '\n';

  // Rebuild: each cluster is a lognormal (mu, sigma); the mixture has a CDF and quantiles.
  const auto mixture = st::lognormal_mixture::from_summary(s, /*truncated=*/true);
  const auto& first = mixture.components().front();
  std::cout << "cluster 0 as a lognormal: mu " << first.mu << ", sigma " << first.sigma << ", mean " << first.mean()
            << " ns\n";
  std::cout << "reconstructed p95 " << mixture.quantile(0.95) << " ns, exact " << st::quantile(durations_ns, 0.95)
            << " ns\n";
}
