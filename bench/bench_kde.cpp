// KDE valley clustering of log-durations: failslow::stats::find_valleys (binned KDE on a
// 1024-point grid + valley search) against scipy.stats.gaussian_kde evaluated on the same grid
// (bench/peers/kde_scipy.py, same data model), plus the scaling to 10^7 samples and the exact
// O(nG) KDE for reference.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <failslow/stats/kde.hpp>
#include <failslow/stats/valleys.hpp>
#include <random>
#include <string>
#include <vector>

#include "peer.hpp"

namespace {

// ln(duration): 60 % N(ln 20us, 0.05), 30 % N(ln 60us, 0.08), 10 % N(ln 300us, 0.1), as the peer.
std::vector<double> log_durations(std::size_t n) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> a(std::log(20e3), 0.05), b(std::log(60e3), 0.08), c(std::log(300e3), 0.1);
  std::vector<double> x(n);
  for (double& v : x) {
    const double r = u(rng);
    v = r < 0.6 ? a(rng) : r < 0.9 ? b(rng) : c(rng);
  }
  return x;
}

failslow::stats::valley_options linear_options() {
  failslow::stats::valley_options opt;
  opt.kde.scale = failslow::stats::kde_scale::linear;  // the inputs already are log-durations
  opt.kde.grid_points = 1024;
  return opt;
}

void BM_valley_clustering(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto x = log_durations(n);
  const auto opt = linear_options();
  double seconds = 0;
  std::size_t clusters = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto c = failslow::stats::find_valleys(x, opt);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    clusters = c.cluster_count();
    benchmark::DoNotOptimize(clusters);
  }
  state.SetComplexityN(static_cast<std::int64_t>(n));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  state.counters["clusters"] = static_cast<double>(clusters);
  if (n == 100000)
    failslow_bench::report_peer(state, "kde_scipy.py", "100000 1024",
                                seconds / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_valley_clustering)
    ->RangeMultiplier(10)
    ->Range(10000, 10000000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

void BM_kde_exact_1024(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto x = log_durations(n);
  const double h = failslow::stats::select_bandwidth(x, {});
  const failslow::stats::kde_grid g{*std::min_element(x.begin(), x.end()) - 3 * h,
                                    *std::max_element(x.begin(), x.end()) + 3 * h, 1024};
  for (auto _ : state) benchmark::DoNotOptimize(failslow::stats::kde_exact(x, nullptr, h, g));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_kde_exact_1024)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
