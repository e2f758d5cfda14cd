#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/stats/descriptive.hpp>
#include <limits>
#include <list>
#include <random>
#include <string>
#include <vector>

#include "support/fixtures.hpp"

using namespace failslow;
using namespace failslow::stats;
using failslow_test::close;
using failslow_test::doubles;

namespace {
const std::pair<const char*, quantile_method> methods[] = {
    {"linear", quantile_method::linear},
    {"lower", quantile_method::lower},
    {"higher", quantile_method::higher},
    {"nearest", quantile_method::nearest},
    {"midpoint", quantile_method::midpoint},
    {"inverted_cdf", quantile_method::inverted_cdf},
    {"hazen", quantile_method::hazen},
    {"weibull", quantile_method::weibull},
    {"median_unbiased", quantile_method::median_unbiased},
    {"normal_unbiased", quantile_method::normal_unbiased},
};
}  // namespace

TEST_CASE("quantiles, moments and robust scale match numpy/scipy") {
  const auto fx = failslow_test::load_fixture("stats/descriptive.json");
  REQUIRE(fx["cases"].size() >= 8);
  for (const auto& c : fx["cases"]) {
    const auto x = doubles(c["x"]);
    const auto p = doubles(c["p"]);
    INFO("case " << c["name"].get<std::string>() << ", n = " << x.size());
    for (const auto& [name, m] : methods) {
      INFO("method " << name);
      const auto expected = doubles(c["quantiles"][name]);
      const auto got = quantiles(x, p, m);
      REQUIRE(got.size() == expected.size());
      for (std::size_t i = 0; i < p.size(); ++i) {
        INFO("p = " << p[i]);
        CHECK(close(got[i], expected[i], 1e-13, 1e-300));
        CHECK(close(quantile(x, p[i], m), expected[i], 1e-13, 1e-300));
      }
    }
    const auto mo = moments(x);
    CHECK(close(mo.mean(), c["mean"].get<double>(), 1e-13, 1e-12));
    // Documented accuracy: Welford's variance is good to ~1e-15 * |mean| / sd relative (each
    // value is rounded at its magnitude, not at its spread).
    const double kappa = mo.count() > 1 ? std::abs(mo.mean()) / mo.stddev() : 0.0;
    if (!c["variance"].is_null()) CHECK(close(mo.variance(), c["variance"].get<double>(), 1e-12 + 1e-15 * kappa));
    CHECK(close(median(x), c["median"].get<double>(), 1e-15));
    CHECK(close(mad(x), c["mad"].get<double>(), 1e-13, 1e-300));
    CHECK(close(iqr(x), c["iqr"].get<double>(), 1e-12, 1e-12));
    if (!c["cv"].is_null())
      CHECK(close(coefficient_of_variation(x), std::abs(c["cv"].get<double>()), 1e-12 + 1e-15 * kappa));
    if (!c["modified_z"].is_null()) {
      const auto z = modified_z_scores(x);
      const auto expected = doubles(c["modified_z"]);
      for (std::size_t i = 0; i < z.size(); ++i) CHECK(close(z[i], expected[i], 1e-12, 1e-12));
    }
  }
}

TEST_CASE("running moments merge like one pass and stay stable at large offsets") {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (double offset : {0.0, 1e6, 1e9}) {
    std::vector<double> x(10007);
    for (double& v : x) v = offset + noise(rng);
    running_moments<double> all, a, b, c;
    for (std::size_t i = 0; i < x.size(); ++i) {
      all.add(x[i]);
      (i % 3 == 0 ? a : i % 3 == 1 ? b : c).add(x[i]);
    }
    running_moments<double> merged;
    merged.merge(a);
    merged.merge(b);
    merged.merge(c);
    INFO("offset " << offset);
    CHECK(merged.count() == all.count());
    CHECK(close(merged.mean(), all.mean(), 1e-14));
    // Each value carries a rounding error of eps * offset relative to a unit spread.
    CHECK(close(merged.variance(), all.variance(), 1e-12 + 1e-15 * offset));
    CHECK(close(all.variance(), 1.0, 0.05));  // the true variance; a naive sum of squares fails at 1e9
    CHECK(merged.min() == all.min());
    CHECK(merged.max() == all.max());
  }
}

TEST_CASE("running moments count non-finite values instead of adding them") {
  running_moments<float> m;
  CHECK(std::isnan(m.mean()));
  CHECK(m.add(1.0f));
  CHECK_FALSE(m.add(std::numeric_limits<float>::quiet_NaN()));
  CHECK_FALSE(m.add(std::numeric_limits<float>::infinity()));
  CHECK(m.add(3.0f));
  CHECK(m.count() == 2);
  CHECK(m.skipped() == 2);
  CHECK(m.mean() == 2.0f);
  CHECK(m.variance() == 2.0f);
  CHECK(m.variance(0) == 1.0f);
  CHECK(std::isnan(running_moments<double>{}.variance()));
  running_moments<float> empty;
  empty.merge(m);
  CHECK(empty.count() == 2);
  CHECK(empty.skipped() == 2);
}

TEST_CASE("iterator pairs, ranges and containers without random access") {
  const std::list<int> l = {5, 1, 4, 2, 3};
  CHECK(median(l.begin(), l.end()) == 3);
  CHECK(quantile(l, 0.25) == 2);
  // Integer samples are summarised in double.
  CHECK(median(std::vector<int>{1, 2}) == 1.5);
  CHECK(quantile(std::vector<int>{1, 2}, 0.5) == 1.5);
  CHECK(mad(std::vector<int>{1, 2, 4, 7}) == 1.5);
  CHECK(quantiles(std::vector<long>{1, 2, 3, 4}, std::vector<double>{0.5}).at(0) == 2.5);
  const std::vector<double> even = {4, 1, 3, 2};
  CHECK(median(even) == 2.5);
  CHECK(mad(std::vector<double>{1, 1, 2, 2, 4, 6, 9}) == 1.0);
  CHECK(close(mad_normal(std::vector<double>{1, 1, 2, 2, 4, 6, 9}), 1.4826, 1e-4));
}

TEST_CASE("modified z-scores fall back when MAD is zero") {
  // More than half equal: MAD = 0, the mean absolute deviation takes over.
  const std::vector<double> x = {10, 10, 10, 10, 10, 10, 30};
  const auto z = modified_z_scores(x);
  const double mean_abs = 20.0 / 7.0;
  CHECK(close(z[6], 20.0 / (1.253314 * mean_abs), 1e-12));
  CHECK(z[0] == 0.0);
  const auto flat = modified_z_scores(std::vector<double>{7, 7, 7});
  for (double v : flat) CHECK(v == 0.0);
}

TEST_CASE("descriptive statistics reject what they cannot define") {
  const std::vector<double> empty;
  CHECK_THROWS_AS(quantile(empty, 0.5), invalid_argument);
  CHECK_THROWS_AS(median(empty), invalid_argument);
  CHECK_THROWS_AS(quantile(std::vector<double>{1, 2}, 1.5), domain_error);
  CHECK_THROWS_AS(quantile(std::vector<double>{1, 2}, -0.1), domain_error);
  CHECK_THROWS_AS(quantile(std::vector<double>{1, 2}, std::nan("")), domain_error);
  CHECK_THROWS_AS(median(std::vector<double>{1, std::nan(""), 2}), domain_error);
  CHECK_THROWS_AS(quantiles(std::vector<double>{1, std::numeric_limits<double>::infinity()}, std::vector<double>{0.5}),
                  domain_error);
  CHECK_THROWS_AS(coefficient_of_variation(std::vector<double>{-1, 1}), domain_error);
  CHECK_THROWS_AS(coefficient_of_variation(empty), invalid_argument);
  CHECK_THROWS_AS(modified_z_scores(empty), invalid_argument);
  CHECK(coefficient_of_variation(std::vector<double>{5}) == 0.0);
}
