#include <boost/math/distributions/lognormal.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/stats/lognormal.hpp>
#include <limits>
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

TEST_CASE("single lognormals: CDF and quantiles match scipy.stats.lognorm") {
  const auto fx = failslow_test::load_fixture("stats/lognormal.json");
  for (const auto& c : fx["single"]) {
    lognormal_component k;
    k.mu = c["mu"].get<double>();
    k.sigma = c["sigma"].get<double>();
    const auto x = doubles(c["x"]), cdf = doubles(c["cdf"]), p = doubles(c["p"]), q = doubles(c["quantile"]);
    INFO("mu " << k.mu << " sigma " << k.sigma);
    const auto boost_dist = k.distribution();
    for (std::size_t i = 0; i < x.size(); ++i) {
      CHECK(close(k.cdf(x[i]), cdf[i], 1e-13, 1e-300));
      CHECK(close(boost::math::cdf(boost_dist, x[i]), cdf[i], 1e-13, 1e-300));
    }
    for (std::size_t i = 0; i < p.size(); ++i) CHECK(close(k.quantile(p[i]), q[i], 1e-13));
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

TEST_CASE("reconstruction from a cluster summary") {
  cluster_summary c;
  c.count = 1000;
  c.min = 9e3, c.max = 15e3, c.p50 = 10e3, c.p90 = 11e3, c.p99 = 13e3;
  const auto k = reconstruct_lognormal(c);
  CHECK(k.mu == Approx(std::log(10e3)));
  CHECK(k.sigma == Approx((std::log(13e3) - std::log(10e3)) / 2.3263478740408408));
  CHECK(boost::math::quantile(k.distribution(), 0.99) == Approx(13e3).epsilon(1e-12));
  CHECK(boost::math::median(k.distribution()) == Approx(10e3).epsilon(1e-12));
  // p99 == p50: a point mass, which has no Boost distribution.
  c.p99 = c.p50;
  const auto pm = reconstruct_lognormal(c);
  CHECK(pm.is_point_mass());
  CHECK(pm.cdf(10e3) == 1.0);
  CHECK(pm.cdf(9999.0) == 0.0);
  CHECK_THROWS_AS(pm.distribution(), domain_error);
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
