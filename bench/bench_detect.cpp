// Detectors: PELT (with complexity fitting), EWMA / CUSUM / ratio-gate updates per second,
// Mahalanobis over 10^4 workers x 12 features, Benjamini-Hochberg over 10^6 p-values. Each runs
// its numpy/scipy peer (bench/peers/) in the same invocation and reports the speedup.
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <chrono>
#include <failslow/detect/binseg.hpp>
#include <failslow/detect/bocpd.hpp>
#include <failslow/detect/cusum.hpp>
#include <failslow/detect/ewma.hpp>
#include <failslow/detect/fdr.hpp>
#include <failslow/detect/mahalanobis.hpp>
#include <failslow/detect/pelt.hpp>
#include <failslow/detect/ratio_gate.hpp>
#include <random>
#include <string>
#include <vector>

#include "peer.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using namespace failslow::detect;

// A level change every 500 points (N(0, 3^2) levels), unit noise: the series of peers/pelt.py
// (same shape, its own generator).
std::vector<double> level_series(std::size_t n) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> level(0.0, 3.0), noise;
  std::vector<double> y(n);
  double l = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 500 == 0) l = level(rng);
    y[i] = l + noise(rng);
  }
  return y;
}

std::vector<double> normal_series(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise;
  std::vector<double> x(n);
  for (double& v : x) v = noise(rng);
  return x;
}

template <class F>
double timed(F&& f) {
  const auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

void BM_pelt_mean(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto y = level_series(n);
  changepoint_options o;
  o.sigma = 1.0;           // as the peer
  o.pen = penalty::bic();  // 2 ln n
  double seconds = 0;
  std::size_t changes = 0;
  for (auto _ : state) seconds += timed([&] { changes = pelt(y, o).changes.size(); });
  state.SetComplexityN(state.range(0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["changes"] = static_cast<double>(changes);
  failslow_bench::report_peer(state, "pelt.py", std::to_string(n),
                              seconds / static_cast<double>(state.iterations() * state.range(0)));
}
BENCHMARK(BM_pelt_mean)
    ->RangeMultiplier(10)
    ->Range(1000, 100000)
    ->Complexity(benchmark::oN)
    ->Unit(benchmark::kMillisecond);

void BM_binseg_mean(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto y = level_series(n);
  changepoint_options o;
  o.sigma = 1.0;
  o.pen = penalty::bic();
  for (auto _ : state) benchmark::DoNotOptimize(binary_segmentation(y, o).changes.size());
  state.SetComplexityN(state.range(0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_binseg_mean)
    ->RangeMultiplier(10)
    ->Range(1000, 100000)
    ->Complexity(benchmark::oNLogN)
    ->Unit(benchmark::kMillisecond);

void BM_ewma_update(benchmark::State& state) {
  const std::size_t n = 1000000;
  const auto x = normal_series(n, 2);
  ewma_options o;
  o.lambda = 0.2;
  o.L = 2.962;
  o.baseline.mode = baseline_mode::known;
  o.trend_run = static_cast<std::size_t>(state.range(0));
  double seconds = 0;
  for (auto _ : state) {
    ewma_chart<double> chart(o);
    seconds += timed([&] {
      for (double v : x) benchmark::DoNotOptimize(chart.update(v).state);
    });
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  failslow_bench::report_peer(state, "ewma_chart.py", std::to_string(n),
                              seconds / static_cast<double>(state.iterations() * static_cast<std::int64_t>(n)));
}
BENCHMARK(BM_ewma_update)->Arg(0)->Arg(5)->Unit(benchmark::kMillisecond);

void BM_cusum_update(benchmark::State& state) {
  const std::size_t n = 1000000;
  const auto x = normal_series(n, 3);
  cusum_options o;
  o.baseline.mode = baseline_mode::known;
  double seconds = 0;
  for (auto _ : state) {
    cusum<double> chart(o);
    seconds += timed([&] {
      for (double v : x) benchmark::DoNotOptimize(chart.update(v).state);
    });
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  failslow_bench::report_peer(state, "cusum_chart.py", "200000",
                              seconds / static_cast<double>(state.iterations() * static_cast<std::int64_t>(n)));
}
BENCHMARK(BM_cusum_update)->Unit(benchmark::kMillisecond);

void BM_bocpd_update(benchmark::State& state) {
  const std::size_t n = 20000;
  const auto x = normal_series(n, 7);
  bocpd_options o;
  o.baseline.mode = baseline_mode::known;
  o.max_run = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    bocpd<double> b(o);
    for (double v : x) benchmark::DoNotOptimize(b.update(v).map_run_length);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_bocpd_update)->Arg(100)->Arg(500)->Unit(benchmark::kMillisecond);

void BM_ratio_gate_update(benchmark::State& state) {
  const std::size_t n = 200000;
  const auto w = static_cast<std::size_t>(state.range(0));
  std::vector<double> x = normal_series(n, 6);
  for (double& v : x) v = 100.0 * std::exp(0.03 * v);
  ratio_gate_options o;
  o.window = w;
  double seconds = 0;
  for (auto _ : state) {
    ratio_gate<double> gate(o);
    seconds += timed([&] {
      for (double v : x) benchmark::DoNotOptimize(gate.update(v).ratio);
    });
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  failslow_bench::report_peer(state, "ratio_gate_numpy.py", std::to_string(n) + " " + std::to_string(w),
                              seconds / static_cast<double>(state.iterations() * static_cast<std::int64_t>(n)));
}
BENCHMARK(BM_ratio_gate_update)->Arg(20)->Arg(200)->Unit(benchmark::kMillisecond);

Eigen::MatrixXd workers(Eigen::Index n, Eigen::Index d) {
  std::mt19937_64 rng(4);
  std::normal_distribution<double> g;
  Eigen::MatrixXd a(d, d), x(n, d);
  for (Eigen::Index i = 0; i < a.size(); ++i) a(i) = g(rng);
  a += 2.0 * Eigen::MatrixXd::Identity(d, d);
  for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = g(rng);
  return x * a;
}

void BM_mahalanobis(benchmark::State& state) {
  const Eigen::Index n = state.range(0), d = 12;
  const auto estimator = static_cast<covariance_estimator>(state.range(1));
  const Eigen::MatrixXd x = workers(n, d);
  mahalanobis_options o;
  o.estimator = estimator;
  double seconds = 0;
  for (auto _ : state)
    seconds += timed([&] { benchmark::DoNotOptimize(detect_outlier_workers(x, o).outliers.size()); });
  state.SetItemsProcessed(state.iterations() * n);
  const char* names[] = {"sample", "ledoit_wolf", "mcd"};
  state.SetLabel(names[state.range(1)]);
  if (estimator != covariance_estimator::mcd)  // no numpy/scipy MCD (scikit-learn is not a dependency)
    failslow_bench::report_peer(state, "mahalanobis_workers.py", std::to_string(n) + " 12 " + names[state.range(1)],
                                seconds / static_cast<double>(state.iterations() * n));
}
BENCHMARK(BM_mahalanobis)
    ->Args({10000, static_cast<int>(covariance_estimator::sample)})
    ->Args({10000, static_cast<int>(covariance_estimator::ledoit_wolf)})
    ->Args({10000, static_cast<int>(covariance_estimator::mcd)})
    ->Unit(benchmark::kMillisecond);

void BM_benjamini_hochberg(benchmark::State& state) {
  const auto m = static_cast<std::size_t>(state.range(0));
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u;
  std::vector<double> p(m);
  for (double& v : p) v = u(rng);
  double seconds = 0;
  for (auto _ : state)
    seconds += timed([&] { benchmark::DoNotOptimize(false_discovery_control(p, 0.05).rejected.size()); });
  state.SetItemsProcessed(state.iterations() * state.range(0));
  failslow_bench::report_peer(state, "bh_fdr.py", std::to_string(m),
                              seconds / static_cast<double>(state.iterations() * state.range(0)));
}
BENCHMARK(BM_benjamini_hochberg)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
