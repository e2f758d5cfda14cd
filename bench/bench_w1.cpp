// Wasserstein-1 matrices: quantile-vector form against scipy.spatial.distance.cdist(cityblock)
// (bench/peers/w1_cdist.py), its condensed triangle (double or float) against pdist, exact
// sample form against a Python loop of scipy.stats.wasserstein_distance
// (bench/peers/w1_exact_loop.py), on 1 and 2 threads; between
// reconstructed summaries (quantile_grid.hpp) against numpy CDF inversion + cdist
// (bench/peers/w1_summaries.py); the quantile vectors alone and the closed-form lognormal pair.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <failslow/stats/quantile_grid.hpp>
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

// The condensed upper triangle (scipy's pdist layout), double (arg 2 = 0) or float (1): the
// same pairs, a half or a quarter of the full matrix's memory. Peer: pdist(..., 'cityblock') / K.
void BM_w1_condensed_quantiles(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto threads = static_cast<unsigned>(state.range(1));
  const bool as_float = state.range(2) != 0;
  const auto q = sorted_rows(n, 256);
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (as_float)
      benchmark::DoNotOptimize(failslow::stats::w1_condensed_quantiles<float>(q, threads));
    else
      benchmark::DoNotOptimize(failslow::stats::w1_condensed_quantiles<double>(q, threads));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double pairs = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
  state.counters["pairs_per_s"] =
      benchmark::Counter(pairs * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  if (n == 1000)
    failslow_bench::report_peer(state, "w1_cdist.py", "1000 256 pdist",
                                seconds / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_w1_condensed_quantiles)
    ->ArgsProduct({{1000}, {1}, {0, 1}})
    ->Args({10000, 2, 0})
    ->Args({10000, 2, 1})
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

// Summary i: 1-4 clusters, the formula of bench/peers/w1_summaries.py.
std::vector<failslow::stats::distribution_summary> summaries(std::size_t n) {
  std::vector<failslow::stats::distribution_summary> out(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < 1 + i % 4; ++c) {
      const double median = 10e3 * (1 + 0.01 * static_cast<double>(i % 7)) * std::pow(3.0, static_cast<double>(c));
      const double sigma = 0.03 + 0.02 * static_cast<double>((i + c) % 5);
      failslow::stats::cluster_summary s;
      s.count = 100 * (c + 1);
      s.p50 = median;
      s.p99 = median * std::exp(sigma * failslow::stats::z_099);
      s.min = median * std::exp(-3 * sigma);
      s.max = median * std::exp(3.2 * sigma);
      out[i].clusters.push_back(s);
    }
  return out;
}

// A group W1 matrix of reconstructed summaries: vectors on the grid, then the L1 matrix.
void BM_w1_matrix_summaries(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto threads = static_cast<unsigned>(state.range(1));
  const auto s = summaries(n);
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(failslow::stats::w1_matrix_summaries(s, 256, true, threads));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double pairs = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
  state.counters["pairs_per_s"] =
      benchmark::Counter(pairs * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  failslow_bench::report_peer(state, "w1_summaries.py", std::to_string(n) + " 256",
                              seconds / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_w1_matrix_summaries)->Args({1024, 1})->Args({1024, 2})->Unit(benchmark::kMillisecond)->UseRealTime();

// One quantile vector per summary, by the number of clusters (arg 0) and truncation (arg 1).
void BM_quantile_vector(benchmark::State& state) {
  const auto clusters = static_cast<std::size_t>(state.range(0));
  const bool truncated = state.range(1) != 0;
  const auto all = summaries(64);
  std::vector<failslow::stats::lognormal_mixture> ms;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].clusters.size() == clusters)
      ms.push_back(failslow::stats::lognormal_mixture::from_summary(all[i], truncated));
  const failslow::stats::quantile_grid grid(256);
  std::vector<double> q(256);
  std::size_t i = 0;
  for (auto _ : state) {
    failslow::stats::quantile_vector(ms[i++ % ms.size()], grid, q.data());
    benchmark::DoNotOptimize(q.data());
  }
  state.counters["vectors_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_quantile_vector)->ArgsProduct({{1, 2, 4}, {0, 1}})->Unit(benchmark::kMicrosecond);

// The same by root finding at each u_k (lognormal_mixture::quantile), what it replaces.
void BM_quantile_vector_root_finding(benchmark::State& state) {
  const auto all = summaries(4);
  const auto m = failslow::stats::lognormal_mixture::from_summary(all[1], true);  // 2 clusters
  std::vector<double> q(256);
  for (auto _ : state) {
    for (std::size_t k = 0; k < q.size(); ++k) q[k] = m.quantile((static_cast<double>(k) + 0.5) / 256.0);
    benchmark::DoNotOptimize(q.data());
  }
}
BENCHMARK(BM_quantile_vector_root_finding)->Unit(benchmark::kMicrosecond);

// Closed-form W1 of two single lognormals (different sigmas: the crossing case).
void BM_w1_lognormal_pair(benchmark::State& state) {
  failslow::stats::lognormal_component a, b;
  a.mu = std::log(20e3);
  a.sigma = 0.05;
  b.mu = std::log(20.5e3);
  b.sigma = 0.08;
  for (auto _ : state) {
    benchmark::DoNotOptimize(failslow::stats::wasserstein1(a, b));
    benchmark::ClobberMemory();
    a.mu += 1e-12;
  }
  state.counters["pairs_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_w1_lognormal_pair);

}  // namespace

BENCHMARK_MAIN();
