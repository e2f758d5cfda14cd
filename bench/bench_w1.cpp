// Wasserstein-1 matrices: quantile-vector form against scipy.spatial.distance.cdist(cityblock)
// (bench/peers/w1_cdist.py), exact sample form against a Python loop of
// scipy.stats.wasserstein_distance (bench/peers/w1_exact_loop.py), on 1 and 2 threads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <failslow/stats/w1_matrix.hpp>
#include <random>
#include <string>
#include <vector>

#include "peer.hpp"

namespace {

failslow::stats::quantile_matrix sorted_rows(std::size_t n, std::size_t k) {
  std::mt19937_64 rng(2);
  std::lognormal_distribution<double> d(std::log(20e3), 0.1);
  failslow::stats::quantile_matrix q(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(k));
  for (std::size_t i = 0; i < n; ++i) {
    double* row = q.data() + i * k;
    for (std::size_t t = 0; t < k; ++t) row[t] = d(rng);
    std::sort(row, row + k);
  }
  return q;
}

void BM_w1_matrix_quantiles(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto threads = static_cast<unsigned>(state.range(1));
  const auto q = sorted_rows(n, 256);
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(failslow::stats::w1_matrix_quantiles(q, threads));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double pairs = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
  state.counters["pairs_per_s"] =
      benchmark::Counter(pairs * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  if (n == 1000)
    failslow_bench::report_peer(state, "w1_cdist.py", "1000 256", seconds / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_w1_matrix_quantiles)
    ->Args({1000, 1})
    ->Args({1000, 2})
    ->Args({10000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_w1_matrix_samples(benchmark::State& state) {
  const auto ranks = static_cast<std::size_t>(state.range(0));
  const auto samples = static_cast<std::size_t>(state.range(1));
  const auto threads = static_cast<unsigned>(state.range(2));
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> d(std::log(20e3), 0.1);
  std::vector<std::vector<double>> sets(ranks, std::vector<double>(samples));
  for (auto& s : sets)
    for (double& v : s) v = d(rng);
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(failslow::stats::w1_matrix_samples(sets, threads));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double pairs = static_cast<double>(ranks) * static_cast<double>(ranks - 1) / 2;
  state.counters["pairs_per_s"] =
      benchmark::Counter(pairs * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  // The peer reports seconds per pair; compare per pair (sorting included on our side).
  failslow_bench::report_peer(state, "w1_exact_loop.py", std::to_string(ranks) + " " + std::to_string(samples),
                              seconds / static_cast<double>(state.iterations()) / pairs);
}
BENCHMARK(BM_w1_matrix_samples)
    ->Args({256, 10000, 1})
    ->Args({256, 10000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
