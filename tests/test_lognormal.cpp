#include <algorithm>
#include <boost/math/distributions/lognormal.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/stats/detail/normal_quantile.hpp>
#include <failslow/stats/lognormal.hpp>
#include <failslow/stats/wasserstein.hpp>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/fixtures.hpp"
#include "support/mixture_json.hpp"

using namespace failslow;
using namespace failslow::stats;
using failslow_test::close;
using failslow_test::doubles;
using failslow_test::mixture_from_json;

TEST_CASE("z_0.99 is the normal quantile") { CHECK(z_099 == Approx(2.3263478740408408).epsilon(1e-16)); }

TEST_CASE("normal_quantile (AS 241) matches the 50-digit quantile from 1e-300 to 1 - 2^-53") {
  const auto fx = failslow_test::load_fixture("stats/normal_quantile.json");
  const auto p = doubles(fx["p"]), z = doubles(fx["z"]);
  REQUIRE(p.size() == z.size());
  REQUIRE(p.size() > 600);
  double worst = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double got = stats::detail::normal_quantile(p[i]);
    INFO("p " << p[i]);
    CHECK(close(got, z[i], 1e-15, 1e-300));
    if (z[i] != 0) worst = std::max(worst, std::fabs(got - z[i]) / std::fabs(z[i]));
  }
  INFO("worst relative error " << worst);
  CHECK(worst < 1e-15);
  CHECK(stats::detail::normal_quantile(0.5) == 0.0);
  CHECK(stats::detail::normal_quantile(0.99) == Approx(z_099).epsilon(1e-15));
  CHECK(stats::detail::normal_quantile(0.0) == -std::numeric_limits<double>::infinity());
  CHECK(stats::detail::normal_quantile(1.0) == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(stats::detail::normal_quantile(std::numeric_limits<double>::quiet_NaN())));
  // Symmetric where 1 - p is exact: Phi^-1(1 - p) = -Phi^-1(p).
  for (const double q : {1e-3, 0.01, 0.07, 0.2, 0.3125}) {
    CHECK(stats::detail::normal_quantile(1 - q) == Approx(-stats::detail::normal_quantile(q)).epsilon(1e-15));
  }
}

TEST_CASE("single lognormals: CDF and quantiles match scipy.stats.lognorm") {
  const auto fx = failslow_test::load_fixture("stats/lognormal.json");
  for (const auto& c : fx["single"]) {
    lognormal_component k;
    k.mu = c["mu"].get<double>();
    k.sigma = c["sigma"].get<double>();
    const auto x = doubles(c["x"]), cdf = doubles(c["cdf"]), p = doubles(c["p"]), q = doubles(c["quantile"]);
    INFO("mu " << k.mu << " sigma " << k.sigma);
    const boost::math::lognormal_distribution<double> boost_dist(k.mu, k.sigma);  // an independent reference
    for (std::size_t i = 0; i < x.size(); ++i) {
      CHECK(close(k.cdf(x[i]), cdf[i], 1e-13, 1e-300));
      CHECK(close(boost::math::cdf(boost_dist, x[i]), cdf[i], 1e-13, 1e-300));
    }
    for (std::size_t i = 0; i < p.size(); ++i) CHECK(close(k.quantile(p[i]), q[i], 1e-13));
    for (std::size_t i = 0; i < x.size(); ++i)
      CHECK(close(k.pdf(x[i]), boost::math::pdf(boost_dist, x[i]), 1e-13, 1e-300));
    CHECK(close(k.mean(), boost::math::mean(boost_dist), 1e-14));
    CHECK(close(k.variance(), boost::math::variance(boost_dist), 1e-13));
  }
}

TEST_CASE("lognormal mixtures: CDF and quantiles match the scipy reference") {
  const auto fx = failslow_test::load_fixture("stats/lognormal.json");
  for (const auto& c : fx["mixtures"]) {
    const auto m = mixture_from_json(c);
    const auto x = doubles(c["x"]), cdf = doubles(c["cdf"]), p = doubles(c["p"]), q = doubles(c["quantile"]);
    INFO("mixture " << c["name"].get<std::string>());
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(close(m.cdf(x[i]), cdf[i], 1e-12, 1e-15));
    for (std::size_t i = 0; i < p.size(); ++i) {
      INFO("p = " << p[i] << ": " << m.quantile(p[i]) << " vs " << q[i]);
      CHECK(close(m.quantile(p[i]), q[i], 1e-12));
    }
  }
}

TEST_CASE("the mixture quantile inverts the CDF and is monotone") {
  lognormal_component a, b, point;
  a.weight = 0.6, a.mu = std::log(20e3), a.sigma = 0.04, a.lo = 17e3, a.hi = 24e3;
  b.weight = 0.3, b.mu = std::log(60e3), b.sigma = 0.1, b.lo = 45e3, b.hi = 90e3;
  point.weight = 0.1, point.sigma = 0, point.point = 35e3, point.mu = std::log(35e3), point.lo = point.hi = 35e3;
  for (bool truncated : {false, true}) {
    const lognormal_mixture m({a, b, point}, truncated);
    double last = 0;
    for (int i = 1; i < 2000; ++i) {
      const double p = i / 2000.0;
      const double x = m.quantile(p);
      INFO("truncated " << truncated << ", p = " << p);
      CHECK(x >= last);
      last = x;
      CHECK(m.cdf(x) >= p - 1e-12);               // F(Q(p)) >= p
      CHECK(m.cdf(x * (1 - 1e-9)) <= p + 1e-12);  // and Q(p) is the smallest such x
    }
    // The point mass is hit exactly: F jumps from 0.6 to 0.7 at 35 us.
    CHECK(m.quantile(0.65) == 35e3);
  }
  CHECK_THROWS_AS(lognormal_mixture({a}, false).quantile(1.5), domain_error);
  CHECK_THROWS_AS(lognormal_mixture({}, false), invalid_argument);
}

TEST_CASE("mixture quantiles in the far tails never fail to bracket", "[lognormal]") {
  // Random mixtures (1-4 components, sigmas 0.001-0.8, some point masses, truncated or not)
  // at p down to 1e-15 and up to 1 - 1e-15, where F at the bracket's ends is p up to rounding.
  std::mt19937_64 rng(20261202);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<lognormal_component> comps(1 + trial % 4);
    for (auto& c : comps) {
      c.weight = 0.05 + u(rng);
      c.mu = std::log(1e3 + 1e6 * u(rng));
      c.sigma = u(rng) < 0.2 ? 0 : 0.001 + 0.8 * u(rng) * u(rng);
      c.point = std::exp(c.mu);
      c.lo = c.sigma == 0 ? c.point : std::exp(c.mu - 3 * c.sigma * (0.2 + u(rng)));
      c.hi = c.sigma == 0 ? c.point : std::exp(c.mu + 3 * c.sigma * (0.2 + u(rng)));
    }
    double total = 0;
    for (const auto& c : comps) total += c.weight;
    for (auto& c : comps) c.weight /= total;
    const lognormal_mixture m(comps, trial % 2 == 0);
    double last = 0;
    for (double p : {1e-15, 1e-14, 1e-10, 0.5, 1 - 1e-10, 1 - 1e-14, 1 - 1e-15}) {
      INFO("trial " << trial << ", p = " << p);
      double x = 0;
      REQUIRE_NOTHROW(x = m.quantile(p));
      CHECK(x >= last);
      last = x;
    }
  }
}

TEST_CASE("a truncated mixture whose survival at its upper bound rounds above 1 - p", "[lognormal]") {
  // Decoded from a simulated job's summaries: two single-launch clusters and a wide one; at
  // p = 1 - 1e-14 the bracket's upper end gave F = p - 4e-17 and the root finder threw.
  lognormal_component a, b, wide;
  a.weight = b.weight = 0.0010416666666666667;
  a.sigma = b.sigma = 0;
  a.point = a.lo = a.hi = 148252.89972187625, a.mu = std::log(a.point);
  b.point = b.lo = b.hi = 159008.69103763165, b.mu = std::log(b.point);
  wide.weight = 0.99791666666666667, wide.mu = 14.094245667875249, wide.sigma = 1.0935469392285611;
  wide.point = 1321457.2565739222, wide.lo = 160250.94643636316, wide.hi = 18758663.017939728;
  const lognormal_mixture m({a, b, wide}, true);
  double x = 0;
  REQUIRE_NOTHROW(x = m.quantile(1 - 1e-14));
  CHECK(x <= wide.hi);
  CHECK(x > m.quantile(0.999));
  CHECK_NOTHROW(stats::wasserstein1(m, m));
}

TEST_CASE("reconstruction from a cluster summary") {
  cluster_summary c;
  c.count = 1000;
  c.min = 9e3, c.max = 15e3, c.p50 = 10e3, c.p90 = 11e3, c.p99 = 13e3;
  const auto k = reconstruct_lognormal(c);
  CHECK(k.mu == Approx(std::log(10e3)));
  CHECK(k.sigma == Approx((std::log(13e3) - std::log(10e3)) / 2.3263478740408408));
  CHECK(k.quantile(0.99) == Approx(13e3).epsilon(1e-12));
  CHECK(k.quantile(0.5) == Approx(10e3).epsilon(1e-12));
  // p99 == p50: a point mass, which has no density.
  c.p99 = c.p50;
  const auto pm = reconstruct_lognormal(c);
  CHECK(pm.is_point_mass());
  CHECK(pm.cdf(10e3) == 1.0);
  CHECK(pm.cdf(9999.0) == 0.0);
  CHECK_THROWS_AS(pm.pdf(10e3), domain_error);
  CHECK(pm.mean() == 10e3);
  CHECK(pm.variance() == 0.0);
  c.count = 0;
  CHECK_THROWS_AS(reconstruct_lognormal(c), invalid_argument);
  // Zero durations are a point mass at zero.
  cluster_summary z;
  z.count = 5;
  const auto zero = reconstruct_lognormal(z);
  CHECK(zero.is_point_mass());
  CHECK(zero.cdf(0.0) == 1.0);
}

TEST_CASE("mixture from a summary weights clusters by count and drops empty ones") {
  distribution_summary s;
  s.boundaries = {30e3, 50e3};
  cluster_summary a, b;
  a.count = 300, a.p50 = 20e3, a.p99 = 24e3, a.min = 18e3, a.max = 25e3;
  b.count = 100, b.p50 = 60e3, b.p99 = 70e3, b.min = 55e3, b.max = 72e3;
  s.clusters = {a, cluster_summary{}, b};
  const auto m = lognormal_mixture::from_summary(s);
  REQUIRE(m.components().size() == 2);
  CHECK(m.components()[0].weight == Approx(0.75));
  CHECK(m.cdf(40e3) == Approx(0.75).margin(1e-9));
  CHECK(m.quantile(0.5) ==
        Approx(std::exp(std::log(20e3) + (std::log(24e3) - std::log(20e3)) / z_099 *
                                             boost::math::quantile(boost::math::normal(), 0.5 / 0.75)))
            .epsilon(1e-9));
}
