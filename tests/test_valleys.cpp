#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/stats/summary.hpp>
#include <failslow/stats/valleys.hpp>
#include <limits>
#include <random>
#include <vector>

using namespace failslow;
using namespace failslow::stats;

namespace {
struct mode {
  double median;  // duration, ns
  double sigma;   // log-space spread
  double weight;
};

std::vector<double> lognormal_mixture_sample(const std::vector<mode>& modes, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> x;
  x.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    double r = u(rng), acc = 0;
    std::size_t k = 0;
    for (; k + 1 < modes.size(); ++k) {
      acc += modes[k].weight;
      if (r < acc) break;
    }
    std::normal_distribution<double> z(std::log(modes[k].median), modes[k].sigma);
    x.push_back(std::exp(z(rng)));
  }
  return x;
}

// Every boundary lies between two consecutive modes, and each gap holds exactly one boundary.
void check_separates(const valley_clustering& c, const std::vector<mode>& modes) {
  REQUIRE(c.cluster_count() == modes.size());
  for (std::size_t k = 0; k + 1 < modes.size(); ++k) {
    CHECK(c.boundaries[k] > modes[k].median);
    CHECK(c.boundaries[k] < modes[k + 1].median);
  }
}
}  // namespace

TEST_CASE("valleys recover well-separated lognormal modes") {
  const std::vector<std::vector<mode>> cases = {
      {{20e3, 0.05, 0.7}, {80e3, 0.05, 0.3}},
      {{5e3, 0.04, 0.5}, {15e3, 0.05, 0.3}, {60e3, 0.06, 0.2}},
      {{2e3, 0.05, 0.2}, {8e3, 0.05, 0.2}, {30e3, 0.05, 0.2}, {120e3, 0.05, 0.2}, {500e3, 0.05, 0.2}},
  };
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    for (std::size_t n : {2000u, 20000u}) {
      for (const auto& modes : cases) {
        const auto x = lognormal_mixture_sample(modes, n, seed);
        INFO("seed " << seed << ", n " << n << ", " << modes.size() << " modes");
        check_separates(find_valleys(x), modes);
      }
    }
  }
}

TEST_CASE("the improved Sheather-Jones bandwidth resolves five modes from 300 samples") {
  const std::vector<mode> modes = {
      {2e3, 0.05, 0.2}, {8e3, 0.05, 0.2}, {30e3, 0.05, 0.2}, {120e3, 0.05, 0.2}, {500e3, 0.05, 0.2}};
  valley_options isj;
  isj.kde.bandwidth.rule = bandwidth_rule::improved_sheather_jones;
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    const auto x = lognormal_mixture_sample(modes, 300, seed);
    INFO("seed " << seed);
    check_separates(find_valleys(x, isj), modes);
    CHECK(find_valleys(x).cluster_count() < 5);  // the rule of thumb merges some of them
  }
}

TEST_CASE("a mode holding 2 % of the mass is kept") {
  const std::vector<mode> modes = {{30e3, 0.05, 0.98}, {400e3, 0.05, 0.02}};
  for (std::uint64_t seed : {4u, 5u, 6u}) {
    const auto x = lognormal_mixture_sample(modes, 10000, seed);
    valley_options opt;
    opt.kde.bandwidth.rule = bandwidth_rule::improved_sheather_jones;
    INFO("seed " << seed);
    check_separates(find_valleys(x, opt), modes);
    check_separates(find_valleys(x), modes);
  }
}

TEST_CASE("a single lognormal of any size is not split") {
  for (std::uint64_t seed : {7u, 8u, 9u, 10u}) {
    for (std::size_t n : {5u, 30u, 200u, 2000u, 50000u, 400000u}) {
      for (double sigma : {0.01, 0.1, 0.5, 1.5}) {
        const auto x = lognormal_mixture_sample({{25e3, sigma, 1.0}}, n, seed);
        INFO("seed " << seed << ", n " << n << ", sigma " << sigma);
        CHECK(find_valleys(x).cluster_count() == 1);
      }
    }
  }
}

TEST_CASE("linear scale clusters plain values") {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> a(-5, 0.5), b(5, 0.5);
  std::vector<double> x;
  for (int i = 0; i < 3000; ++i) x.push_back(i % 3 ? a(rng) : b(rng));
  valley_options opt;
  opt.kde.scale = kde_scale::linear;
  const auto c = find_valleys(x, opt);
  REQUIRE(c.cluster_count() == 2);
  CHECK(c.boundaries[0] > -3);
  CHECK(c.boundaries[0] < 3);
  const auto labels = assign_clusters(x, c);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(labels[i] == (x[i] < c.boundaries[0] ? 0u : 1u));
}

TEST_CASE("degenerate inputs") {
  const std::vector<double> empty;
  CHECK_THROWS_AS(find_valleys(empty), invalid_argument);
  CHECK(find_valleys(std::vector<double>{42.0}).cluster_count() == 1);
  CHECK(find_valleys(std::vector<double>(1000, 42.0)).cluster_count() == 1);
  CHECK(find_valleys(std::vector<double>(1000, 42.0)).density.bandwidth == 0.0);
  // Two distinct values: two clusters when there are enough of each.
  std::vector<double> two;
  for (int i = 0; i < 500; ++i) two.push_back(i % 2 ? 10e3 : 50e3);
  const auto c2 = find_valleys(two);
  REQUIRE(c2.cluster_count() == 2);
  CHECK(c2.boundaries[0] > 10e3);
  CHECK(c2.boundaries[0] < 50e3);
  // A spread at round-off level, and a denormal spread in linear scale: one cluster.
  std::vector<double> roundoff = {1.0, std::nextafter(1.0, 2.0), 1.0, std::nextafter(1.0, 2.0)};
  CHECK(find_valleys(roundoff).cluster_count() == 1);
  valley_options lin;
  lin.kde.scale = kde_scale::linear;
  const double tiny = std::numeric_limits<double>::denorm_min();
  CHECK(find_valleys(std::vector<double>{0.0, tiny, 2 * tiny, 0.0}, lin).cluster_count() == 1);
  // NaN, Inf and non-positive durations are counted, not used.
  std::vector<double> dirty = lognormal_mixture_sample({{20e3, 0.05, 0.5}, {80e3, 0.05, 0.5}}, 4000, 12);
  dirty.push_back(std::nan(""));
  dirty.push_back(-3);
  dirty.push_back(0);
  dirty.push_back(std::numeric_limits<double>::infinity());
  const auto cd = find_valleys(dirty);
  CHECK(cd.cluster_count() == 2);
  CHECK(cd.density.used == 4000);
  CHECK(cd.density.skipped_nonfinite == 2);
  CHECK(cd.density.skipped_nonpositive == 2);
  const auto labels = assign_clusters(dirty, cd);
  CHECK(labels[4000] == unassigned);
  CHECK(labels[4001] == unassigned);
  CHECK(labels[4002] == unassigned);
  CHECK(labels[4003] == unassigned);
}

TEST_CASE("huge n: ten million durations") {
  const auto x = lognormal_mixture_sample({{10e3, 0.03, 0.5}, {12e3, 0.03, 0.5}}, 10'000'000, 13);
  const auto c = find_valleys(x);
  CHECK(c.cluster_count() == 2);
  CHECK(c.density.used == 10'000'000);
}

TEST_CASE("cluster summaries") {
  const std::vector<mode> modes = {{20e3, 0.05, 0.75}, {80e3, 0.05, 0.25}};
  const auto x = lognormal_mixture_sample(modes, 8000, 21);
  const auto s = summarize_clusters(x);
  REQUIRE(s.clusters.size() == 2);
  CHECK(s.count() == 8000);
  CHECK(s.clusters[0].count + s.clusters[1].count == 8000);
  CHECK(static_cast<double>(s.clusters[1].count) / 8000.0 == Approx(0.25).margin(0.02));
  for (const auto& c : s.clusters) {
    CHECK(c.min <= c.p50);
    CHECK(c.p50 <= c.p90);
    CHECK(c.p90 <= c.p99);
    CHECK(c.p99 <= c.max);
    CHECK(c.mean == Approx(c.sum / static_cast<double>(c.count)));
  }
  CHECK(s.clusters[0].p50 == Approx(20e3).epsilon(0.01));
  CHECK(s.clusters[1].p50 == Approx(80e3).epsilon(0.01));
  // Pooled moments of the clusters equal the whole sample's.
  const auto whole = moments(x);
  CHECK(s.mean() == Approx(whole.mean()).epsilon(1e-12));
  CHECK(s.variance() == Approx(whole.variance()).epsilon(1e-9));
  CHECK(s.overall.p50 == Approx(quantile(x, 0.5)).epsilon(1e-15));
  CHECK(s.overall.count == 8000);
  // Explicit boundaries, values on a boundary go up, empty clusters are kept.
  const std::vector<double> v = {1, 2, 3, 4, 5};
  const auto t = summarize(v.begin(), v.end(), std::vector<double>{3, 3.5, 100});
  REQUIRE(t.clusters.size() == 4);
  CHECK(t.clusters[0].count == 2);
  CHECK(t.clusters[1].count == 1);
  CHECK(t.clusters[2].count == 2);
  CHECK(t.clusters[3].count == 0);
  CHECK_THROWS_AS(summarize(v.begin(), v.end(), std::vector<double>{3, 1}), invalid_argument);
}

TEST_CASE("summarize of a vector it takes, or of sorted values, is the same summary bit for bit") {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> d(std::log(5e4), 0.4);
  std::vector<double> x;
  for (int i = 0; i < 20000; ++i) x.push_back(std::round(d(rng)));
  x[7] = std::nan("");
  x[9] = std::numeric_limits<double>::infinity();
  x[11] = -0.0;
  const std::vector<double> cuts = {4e4, 6e4};
  const auto a = summarize(x.begin(), x.end(), cuts);
  const auto b = summarize(std::vector<double>(x), cuts);
  std::vector<double> sorted;
  for (double v : x)
    if (std::isfinite(v)) sorted.push_back(v == 0 ? 0.0 : v);
  std::sort(sorted.begin(), sorted.end());
  const auto c = summarize_sorted(std::move(sorted), cuts);
  CHECK(a.skipped == 2);
  CHECK(b.skipped == 2);
  REQUIRE(a.clusters.size() == 3);
  for (const auto* s : {&b, &c}) {
    REQUIRE(s->clusters.size() == 3);
    for (std::size_t k = 0; k < 4; ++k) {
      const auto& p = k < 3 ? a.clusters[k] : a.overall;
      const auto& q = k < 3 ? s->clusters[k] : s->overall;
      CHECK(p.count == q.count);
      CHECK(p.sum == q.sum);  // the same order of summation: equal, not close
      CHECK(p.variance == q.variance);
      CHECK(p.min == q.min);
      CHECK(p.p50 == q.p50);
      CHECK(p.p99 == q.p99);
    }
  }
  CHECK_THROWS_AS(summarize(std::vector<double>{std::nan("")}, cuts), invalid_argument);
}
