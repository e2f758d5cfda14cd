// How much does the lognormal reconstruction of a cluster summary lose? For realistic kernel
// duration shapes: W1(reconstructed mixture, empirical distribution) / mean duration.
//   ./example_reconstruction_fidelity        (the table in bench/README.md)
#include <algorithm>
#include <cmath>
#include <failslow/stats/summary.hpp>
#include <failslow/stats/wasserstein.hpp>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {
struct shape {
  std::string name;
  std::vector<double> medians, sigmas, weights;
  double gamma_tail = 0;  // fraction of samples with an added exponential delay (queueing)
};
}  // namespace

int main() {
  namespace st = failslow::stats;
  const std::vector<shape> shapes = {
      {"GEMM, one mode, sigma 0.02", {180e3}, {0.02}, {1.0}},
      {"elementwise, one mode, sigma 0.1", {8e3}, {0.1}, {1.0}},
      {"attention, two modes 80/20", {25e3, 41e3}, {0.03, 0.05}, {0.8, 0.2}},
      {"three input shapes", {5e3, 15e3, 60e3}, {0.04, 0.05, 0.06}, {0.5, 0.3, 0.2}},
      {"collective with waits (2 % tail)", {90e3}, {0.05}, {1.0}, 0.02},
      {"heavy lognormal, sigma 0.5", {12e3}, {0.5}, {1.0}},
  };
  std::cout << std::left << std::setw(36) << "kernel shape" << std::setw(10) << "clusters" << std::setw(16)
            << "W1/mean (full)"
            << "W1/mean (truncated)\n";
  for (const auto& s : shapes) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(0, 1);
    std::exponential_distribution<double> wait(1.0 / (s.medians[0] * 0.5));
    std::vector<double> x;
    for (int i = 0; i < 20000; ++i) {
      double r = u(rng), acc = 0;
      std::size_t k = 0;
      for (; k + 1 < s.weights.size(); ++k)
        if (r < (acc += s.weights[k])) break;
      std::lognormal_distribution<double> d(std::log(s.medians[k]), s.sigmas[k]);
      x.push_back(d(rng) + (u(rng) < s.gamma_tail ? wait(rng) : 0.0));
    }
    const st::distribution_summary sum = st::summarize_clusters(x);
    std::sort(x.begin(), x.end());
    const double mean = st::moments(x).mean();
    const auto empirical = st::quantile_vector_sorted(x.data(), x.size(), 4096);
    double rel[2];
    for (int t = 0; t < 2; ++t) {
      const auto m = st::lognormal_mixture::from_summary(sum, t == 1);
      rel[t] = st::wasserstein1_quantiles(empirical, st::quantile_vector(m, 4096)) / mean;
    }
    std::cout << std::setw(36) << s.name << std::setw(10) << sum.clusters.size() << std::setw(16)
              << std::to_string(rel[0] * 100).substr(0, 5) + " %" << std::to_string(rel[1] * 100).substr(0, 5)
              << " %\n";
  }
}
