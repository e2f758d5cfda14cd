#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/stats/bandwidth.hpp>
#include <failslow/stats/kde.hpp>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace failslow;
using namespace failslow::stats;
using failslow_test::close;
using failslow_test::doubles;

TEST_CASE("bandwidth rules match their formulas as scipy/numpy compute them") {
  const auto fx = failslow_test::load_fixture("stats/bandwidth.json");
  for (const auto& c : fx["cases"]) {
    const auto x = doubles(c["x"]);
    INFO("case " << c["name"].get<std::string>() << ", n = " << x.size());
    CHECK(close(select_bandwidth(x, {bandwidth_rule::rule_of_thumb}), c["rule_of_thumb"].get<double>(), 1e-12));
    CHECK(close(select_bandwidth(x, {bandwidth_rule::robust_rule_of_thumb}), c["robust_rule_of_thumb"].get<double>(),
                1e-12));
    CHECK(close(select_bandwidth(x, {bandwidth_rule::scott}), c["scott"].get<double>(), 1e-12));
    CHECK(close(select_bandwidth(x, {bandwidth_rule::silverman}), c["silverman"].get<double>(), 1e-12));
    // ISJ: same binning and fixed point, solved by different root finders: 1e-6 relative.
    CHECK(close(select_bandwidth(x, {bandwidth_rule::improved_sheather_jones}), c["isj"].get<double>(), 1e-6));
  }
}

TEST_CASE("ISJ resolves modes that the rule of thumb smooths away") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> a(0.0, 0.1), b(3.0, 0.1);
  std::vector<double> x;
  for (int i = 0; i < 4000; ++i) x.push_back(i % 2 ? a(rng) : b(rng));
  const double rot = select_bandwidth(x, {});
  const double isj = select_bandwidth(x, {bandwidth_rule::improved_sheather_jones});
  CHECK(isj < 0.5 * rot);
  CHECK(isj > 0.005);
}

TEST_CASE("bandwidth edge cases") {
  CHECK(select_bandwidth(std::vector<double>{3.0}, {}) == 0.0);
  CHECK(select_bandwidth(std::vector<double>{2, 2, 2, 2}, {}) == 0.0);
  CHECK_THROWS_AS(select_bandwidth(std::vector<double>{}, {}), invalid_argument);
  CHECK_THROWS_AS(select_bandwidth(std::vector<double>{1, std::nan("")}, {}), domain_error);
  CHECK_THROWS_AS(bandwidth_spec::fixed(0), invalid_argument);
  CHECK_THROWS_AS(bandwidth_spec::fixed(-1), invalid_argument);
  CHECK(select_bandwidth(std::vector<double>{1, 2}, bandwidth_spec::fixed(0.5)) == 0.5);
  CHECK(parse_bandwidth("isj").rule == bandwidth_rule::improved_sheather_jones);
  CHECK(parse_bandwidth("0.25").value == 0.25);
  CHECK_THROWS_AS(parse_bandwidth("wide"), invalid_argument);
  CHECK_THROWS_AS(parse_bandwidth("0.25x"), invalid_argument);
  CHECK_THROWS_AS(parse_bandwidth("-3"), invalid_argument);
  // Most values equal: IQR = 0, the robust rule falls back to the standard deviation.
  const std::vector<double> tied = {1, 1, 1, 1, 1, 1, 1, 9};
  CHECK(select_bandwidth(tied, {bandwidth_rule::robust_rule_of_thumb}) ==
        Approx(select_bandwidth(tied, {bandwidth_rule::rule_of_thumb})));
}

TEST_CASE("exact KDE equals scipy.stats.gaussian_kde") {
  const auto fx = failslow_test::load_fixture("stats/kde.json");
  for (const auto& c : fx["cases"]) {
    const auto x = doubles(c["x"]);
    const auto grid = doubles(c["grid"]);
    const auto expected = doubles(c["density"]);
    std::vector<double> w;
    if (!c["weights"].is_null()) w = doubles(c["weights"]);
    const kde_grid g{grid.front(), grid.back(), grid.size()};
    INFO("case " << c["name"].get<std::string>());
    for (std::size_t i = 0; i < grid.size(); ++i) REQUIRE(close(g.at(i), grid[i], 1e-14, 1e-14));
    const auto f = kde_exact(x, w.empty() ? nullptr : &w, c["bandwidth"].get<double>(), g);
    double peak = 0;
    for (double v : expected) peak = std::max(peak, v);
    for (std::size_t i = 0; i < f.size(); ++i) CHECK(close(f[i], expected[i], 1e-10, 1e-14 * peak));
  }
}

namespace {
std::vector<double> mixture_sample(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> m1(std::log(20e3), 0.05), m2(std::log(60e3), 0.08), m3(std::log(300e3), 0.1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> x(n);
  for (double& v : x) {
    const double r = u(rng);
    v = r < 0.6 ? m1(rng) : r < 0.9 ? m2(rng) : m3(rng);
  }
  return x;
}

double max_rel_deviation(const std::vector<double>& a, const std::vector<double>& b) {
  double peak = 0, dev = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    peak = std::max(peak, b[i]);
    dev = std::max(dev, std::abs(a[i] - b[i]));
  }
  return dev / peak;
}
}  // namespace

TEST_CASE("binned KDE deviates from the exact one within its documented bound") {
  // The documented bound (kde.hpp): max |binned - exact| / peak <= 0.05 (dx/h)^2 + 1e-8, on
  // data of several shapes and seeds, for h/dx from the refusal limit 2 up to 32.
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto x = mixture_sample(seed, 3000);
    for (double cells : {2.0, 3.0, 4.0, 8.0, 16.0, 32.0}) {
      const double h = 0.04;
      const double dx = h / cells;
      const double lo = *std::min_element(x.begin(), x.end()) - 6 * h;
      const double hi = *std::max_element(x.begin(), x.end()) + 6 * h;
      const auto points = static_cast<std::size_t>(std::ceil((hi - lo) / dx)) + 1;
      const kde_grid g{lo, lo + dx * static_cast<double>(points - 1), points};
      const auto exact = kde_exact(x, nullptr, h, g);
      const auto binned = kde_binned(x, nullptr, h, g);
      const double dev = max_rel_deviation(binned, exact);
      const double bound = 0.05 / (cells * cells) + 1e-8;
      INFO("seed " << seed << ", h/dx = " << cells << ": deviation " << dev << " of peak, bound " << bound);
      CHECK(dev <= bound);
      if (seed == 1) std::cout << "binned KDE, h/dx = " << cells << ": max deviation " << dev << " of peak\n";
    }
  }
}

TEST_CASE("binned KDE: direct and FFT convolution agree, weights respected") {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n01(0, 1);
  std::vector<double> x(500), w(500);
  std::uniform_real_distribution<double> u(0.1, 2.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = n01(rng);
    w[i] = u(rng);
  }
  // h/dx = 10 (direct, kernel half-width 60 cells) and 40 (FFT, 240 cells).
  for (double cells : {10.0, 40.0}) {
    const double h = 0.3, dx = h / cells;
    const auto points = static_cast<std::size_t>(std::ceil(10.0 / dx)) + 1;
    const kde_grid g{-5.0, -5.0 + dx * static_cast<double>(points - 1), points};
    const auto exact = kde_exact(x, &w, h, g);
    const auto binned = kde_binned(x, &w, h, g);
    CHECK(max_rel_deviation(binned, exact) <= 0.05 / (cells * cells) + 1e-8);
    double integral = 0;
    for (double f : binned) integral += f * dx;
    CHECK(integral == Approx(1.0).epsilon(1e-6));
  }
}

TEST_CASE("binned KDE: every SIMD path this CPU has bins to the baseline path's bits") {
  // Values past both ends (folded onto them), one exactly at hi, a count that is not a multiple
  // of the 64-value blocks; with and without weights, direct and FFT convolution.
  using stats::detail::simd_path;
  std::mt19937_64 rng(41);
  std::normal_distribution<double> d(0, 1.5);
  std::vector<double> x(10007), w(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = d(rng);
    w[i] = 0.25 + static_cast<double>(i % 7);
  }
  x[5] = 4;
  const kde_grid grid{-4, 4, 513};
  for (const double h : {0.05, 1.0}) {
    const auto base = stats::detail::bin_and_convolve(x.data(), x.size(), nullptr, h, grid, {}, simd_path::baseline);
    const auto base_w = stats::detail::bin_and_convolve(x.data(), x.size(), w.data(), h, grid, {}, simd_path::baseline);
    CHECK(kde_binned(x, nullptr, h, grid) == base);  // the default path (best_simd_path)
    for (std::size_t p = 0; p < stats::detail::simd_path_count; ++p) {
      const auto path = static_cast<simd_path>(p);
      CAPTURE(stats::detail::to_string(path), h);
      if (!stats::detail::simd_path_supported(path)) {
        CHECK_THROWS_AS(stats::detail::bin_and_convolve(x.data(), x.size(), nullptr, h, grid, {}, path),
                        invalid_argument);
        continue;
      }
      CHECK(stats::detail::bin_and_convolve(x.data(), x.size(), nullptr, h, grid, {}, path) == base);
      CHECK(stats::detail::bin_and_convolve(x.data(), x.size(), w.data(), h, grid, {}, path) == base_w);
    }
  }
}

TEST_CASE("binned KDE refuses a grid too coarse, estimate_density widens it") {
  const std::vector<double> x = {0.0, 0.1, 0.2, 5.0};
  CHECK_THROWS_AS(kde_binned(x, nullptr, 0.01, kde_grid{-1, 6, 100}), invalid_argument);
  kde_options opt;
  opt.scale = kde_scale::linear;
  opt.bandwidth = bandwidth_spec::fixed(0.001);
  opt.grid_points = 64;
  const auto d = estimate_density(x.begin(), x.end(), opt);
  CHECK(d.bandwidth / d.grid.step() >= 2.0);
  CHECK(d.grid.points > 64);
  opt.max_grid_points = 1000;
  CHECK_THROWS_AS(estimate_density(x.begin(), x.end(), opt), invalid_argument);
}

TEST_CASE("estimate_density works in log space and counts what it skips") {
  std::vector<double> d = {10e3, 11e3, 12e3, -5, 0, std::nan(""), std::numeric_limits<double>::infinity(), 50e3};
  const auto est = estimate_density(d.begin(), d.end());
  CHECK(est.used == 4);
  CHECK(est.skipped_nonpositive == 2);
  CHECK(est.skipped_nonfinite == 2);
  CHECK(est.used + est.skipped_nonpositive + est.skipped_nonfinite == d.size());
  CHECK(est.min == Approx(std::log(10e3)));
  CHECK(est.original(est.max) == Approx(50e3));
  kde_options lin;
  lin.scale = kde_scale::linear;
  const auto est2 = estimate_density(d.begin(), d.end(), lin);
  CHECK(est2.used == 6);
  CHECK(est2.skipped_nonfinite == 2);
  const std::vector<double> bad = {-1, 0, std::nan("")};
  CHECK_THROWS_AS(estimate_density(bad.begin(), bad.end()), invalid_argument);
}

TEST_CASE("KDE input errors") {
  const std::vector<double> x = {1, 2, 3};
  const kde_grid g{0, 4, 64};
  CHECK_THROWS_AS(kde_exact({}, nullptr, 0.5, g), invalid_argument);
  CHECK_THROWS_AS(kde_exact(x, nullptr, 0.0, g), invalid_argument);
  CHECK_THROWS_AS(kde_exact(x, nullptr, std::nan(""), g), invalid_argument);
  CHECK_THROWS_AS(kde_exact(x, nullptr, 0.5, kde_grid{0, 4, 1}), invalid_argument);
  CHECK_THROWS_AS(kde_exact(x, nullptr, 0.5, kde_grid{4, 0, 10}), invalid_argument);
  const std::vector<double> short_w = {1, 2};
  CHECK_THROWS_AS(kde_exact(x, &short_w, 0.5, g), invalid_argument);
  const std::vector<double> neg_w = {1, -2, 1};
  CHECK_THROWS_AS(kde_binned(x, &neg_w, 0.5, g), domain_error);
  const std::vector<double> zero_w = {0, 0, 0};
  CHECK_THROWS_AS(kde_binned(x, &zero_w, 0.5, g), domain_error);
  const std::vector<double> nan_x = {1, std::nan("")};
  CHECK_THROWS_AS(kde_binned(nan_x, nullptr, 0.5, g), domain_error);
}
