// EWMA chart (failslow/detect/ewma.hpp), its ARL design (ewma_design.hpp) and the run rules.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <failslow/detect/ewma.hpp>
#include <failslow/detect/ewma_design.hpp>
#include <failslow/detect/run_rules.hpp>
#include <limits>
#include <random>
#include <vector>

#include "support/detect_reference.hpp"

using namespace failslow::detect;

namespace {

ewma_options known_chart(double lambda, double L) {
  ewma_options o;
  o.lambda = lambda;
  o.L = L;
  o.baseline.mode = baseline_mode::known;
  o.baseline.mu = 0.0;
  o.baseline.sigma = 1.0;
  o.trend_run = 0;
  return o;
}

struct run_length_stats {
  double mean = 0, se = 0;
};

// Seeded simulation of the run length to the first alarm of a chart started at z_0 = mu, with
// observations N(shift, 1).
run_length_stats simulate_arl(double lambda, double L, double shift, int runs, std::uint64_t seed) {
  ewma_chart<double> chart(known_chart(lambda, L));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(shift, 1.0);
  double s = 0, s2 = 0;
  for (int r = 0; r < runs; ++r) {
    chart.restart();
    double len = 0;
    for (;;) {
      ++len;
      if (chart.update(noise(rng)).state == chart_state::alarm) break;
      if (len > 1e6) FAIL("chart never alarmed");
    }
    s += len;
    s2 += len * len;
  }
  run_length_stats st;
  st.mean = s / runs;
  st.se = std::sqrt((s2 / runs - st.mean * st.mean) / runs);
  return st;
}

const nlohmann::json& arl_fixture() {
  static const nlohmann::json j = failslow_test::detect_fixture("ewma_arl.json");
  return j;
}

double reference_arl(double lambda, double L, double shift, const char* key = "arl") {
  for (const auto& e : arl_fixture()["ewma"])
    if (e["lambda"] == lambda && e["L"] == L && e["shift"] == shift) return e[key].get<double>();
  throw std::runtime_error("no reference ARL");
}

}  // namespace

TEST_CASE("ewma: in-control ARL matches Lucas & Saccucci (Brook-Evans chain) by seeded simulation", "[ewma][arl]") {
  struct config {
    double lambda, L, lower_L, upper_L;
    std::uint64_t seed;
  };
  // lower_L / upper_L: neighbouring widths whose ARLs (from the reference chain) the tolerance
  // must exclude, so that a chart with a slightly wrong width could not pass.
  const config configs[] = {
      {0.2, 2.962, 2.862, 3.062, 11}, {0.1, 2.814, 0, 0, 12}, {0.05, 2.615, 0, 0, 13}, {1.0, 3.0, 0, 0, 14}};
  for (const auto& c : configs) {
    const double ref = reference_arl(c.lambda, c.L, 0.0);
    const auto sim = simulate_arl(c.lambda, c.L, 0.0, 20000, c.seed);
    INFO("lambda " << c.lambda << " L " << c.L << ": simulated " << sim.mean << " +- " << sim.se << ", chain " << ref);
    // The chain reproduces the published table (500 and 370.4) ...
    if (c.lambda == 1.0)
      CHECK(ref == Approx(370.398).epsilon(1e-4));
    else
      CHECK(ref == Approx(500.0).epsilon(0.002));
    // ... and the chart's run lengths agree with it within 4 standard errors (~0.7 % each).
    CHECK(std::abs(sim.mean - ref) < 4.0 * sim.se);
    CHECK(sim.se < 0.01 * ref);
    if (c.lower_L > 0) {
      const double lo = reference_arl(c.lambda, c.lower_L, 0.0), hi = reference_arl(c.lambda, c.upper_L, 0.0);
      CHECK(std::abs(lo - ref) > 10.0 * sim.se);                            // L 3.4 % smaller: ARL 373
      CHECK(std::abs(hi - ref) > 10.0 * sim.se);                            // L 3.4 % larger: ARL 676
      CHECK(std::abs(reference_arl(0.2, 3.0, 0.0) - ref) > 10.0 * sim.se);  // L = 3 (the seed's): ARL 560
    }
  }
}

TEST_CASE("ewma: out-of-control ARL after a 1-sigma and a 0.5-sigma shift", "[ewma][arl]") {
  for (double shift : {1.0, 0.5}) {
    const double ref = reference_arl(0.2, 2.962, shift);
    const auto sim = simulate_arl(0.2, 2.962, shift, 20000, 99 + static_cast<std::uint64_t>(shift * 10));
    INFO("shift " << shift << ": simulated " << sim.mean << " +- " << sim.se << ", chain " << ref);
    CHECK(std::abs(sim.mean - ref) < 4.0 * sim.se);
  }
}

TEST_CASE("ewma_design: Brook-Evans ARL equals the reference chain, L for a target ARL", "[ewma][arl]") {
  for (const auto& e : arl_fixture()["ewma"]) {
    const double lambda = e["lambda"], L = e["L"], shift = e["shift"];
    INFO("lambda " << lambda << " L " << L << " shift " << shift);
    const double ours = ewma_arl(lambda, L, shift, 401);
    CHECK(ours == Approx(e["arl_401"].get<double>()).epsilon(1e-8));  // same chain, same grid
    CHECK(ours == Approx(e["arl"].get<double>()).epsilon(1e-3));      // converged chain
  }
  CHECK(ewma_limit_for_arl(0.2, 500.0) == Approx(2.962).margin(0.002));
  CHECK(ewma_limit_for_arl(0.1, 500.0) == Approx(2.814).margin(0.002));
  CHECK(ewma_limit_for_arl(1.0, 370.398) == Approx(3.0).margin(1e-4));
  CHECK_THROWS_AS(ewma_arl(0.0, 3.0), failslow::invalid_argument);
  CHECK_THROWS_AS(ewma_arl(0.2, 3.0, 0.0, 400), failslow::invalid_argument);
  CHECK_THROWS_AS(ewma_limit_for_arl(0.2, 0.5), failslow::invalid_argument);
}

TEST_CASE("ewma: statistic and limits follow the formulas", "[ewma]") {
  ewma_options o = known_chart(0.3, 2.5);
  o.baseline.mu = 10.0;
  o.baseline.sigma = 2.0;
  for (auto limits : {ewma_limits::asymptotic, ewma_limits::exact}) {
    o.limits = limits;
    ewma_chart<double> chart(o);
    const std::vector<double> xs = {10.5, 9.0, 12.0, 11.0, 10.0, 13.0};
    double z = 10.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const auto p = chart.update(xs[i]);
      z = 0.3 * xs[i] + 0.7 * z;
      double width = 2.5 * 2.0 * std::sqrt(0.3 / 1.7);
      if (limits == ewma_limits::exact) width *= std::sqrt(1.0 - std::pow(0.7, 2.0 * static_cast<double>(i + 1)));
      CHECK(p.index == i);
      CHECK(p.z == Approx(z).epsilon(1e-14));
      CHECK(p.centre == 10.0);
      CHECK(p.ucl == Approx(10.0 + width).epsilon(1e-14));
      CHECK(p.lcl == Approx(10.0 - width).epsilon(1e-14));
      CHECK(p.state == ((z > 10.0 + width || z < 10.0 - width) ? chart_state::alarm : chart_state::in_control));
    }
  }
}

TEST_CASE("ewma: exact limits alarm earlier after a start than asymptotic ones", "[ewma]") {
  // A 1.5-sigma shift from the first value: the narrower early limits of the exact chart catch it
  // sooner on average.
  double sum_exact = 0, sum_asym = 0;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(1.5, 1.0);
  for (int r = 0; r < 3000; ++r) {
    std::vector<double> xs(200);
    for (double& x : xs) x = noise(rng);
    for (auto limits : {ewma_limits::exact, ewma_limits::asymptotic}) {
      ewma_options o = known_chart(0.1, 2.814);
      o.limits = limits;
      ewma_chart<double> chart(o);
      int len = 0;
      for (double x : xs) {
        ++len;
        if (chart.update(x).state == chart_state::alarm) break;
      }
      (limits == ewma_limits::exact ? sum_exact : sum_asym) += len;
    }
  }
  CHECK(sum_exact < 0.9 * sum_asym);
}

TEST_CASE("ewma: one-sided charts ignore the other direction", "[ewma]") {
  ewma_options o = known_chart(0.2, 3.0);
  o.side = chart_side::upper;
  ewma_chart<double> up(o);
  for (int i = 0; i < 50; ++i) CHECK(up.update(-5.0).state == chart_state::in_control);
  for (int i = 0; i < 50; ++i) up.update(5.0);
  CHECK(up.update(5.0).state == chart_state::alarm);
  o.side = chart_side::lower;
  ewma_chart<double> down(o);
  CHECK(down.update(8.0).state == chart_state::in_control);
  const auto p = down.update(-20.0);
  CHECK(p.state == chart_state::alarm);
  CHECK(p.direction == -1);
}

TEST_CASE("ewma: trend rule -- k moves in one direction, distribution-free rate 1/(k+1)!", "[ewma][trend]") {
  // A slow ramp well inside the limits: the warning comes with the 5th consecutive rise.
  ewma_options o = known_chart(0.2, 3.0);
  o.trend_run = 5;
  ewma_chart<double> chart(o);
  CHECK(chart.update(0.0).state == chart_state::in_control);
  for (int i = 1; i <= 4; ++i) CHECK(chart.update(0.01 * i).state == chart_state::in_control);
  const auto p = chart.update(0.05);
  CHECK(p.state == chart_state::trend_warning);
  CHECK(p.trend);
  CHECK(p.direction == 1);
  CHECK(chart.update(0.0).state == chart_state::in_control);  // a fall ends the run

  // iid noise (heavy-tailed, to show the rate does not depend on the distribution)
  for (std::size_t k : {std::size_t{5}, std::size_t{3}}) {
    for (auto side : {chart_side::both, chart_side::upper}) {
      ewma_options t = known_chart(0.2, 1e6);  // limits never reached
      t.trend_run = k;
      t.side = side;
      ewma_chart<double> c(t);
      std::mt19937_64 rng(1000 + k);
      std::student_t_distribution<double> noise(3.0);
      const int n = 1000000;
      int warnings = 0;
      for (int i = 0; i < n; ++i) warnings += c.update(noise(rng)).state == chart_state::trend_warning ? 1 : 0;
      double fact = 1;
      for (std::size_t i = 2; i <= k + 1; ++i) fact *= static_cast<double>(i);
      const double expected = (side == chart_side::both ? 2.0 : 1.0) / fact * n;
      INFO("k " << k << " side " << static_cast<int>(side) << ": " << warnings << " warnings, expected " << expected);
      CHECK(std::abs(warnings - expected) < 0.08 * expected);
    }
  }
}

TEST_CASE("ewma: trend on the statistic fires more often under noise than on observations", "[ewma][trend]") {
  int obs = 0, stat = 0;
  for (auto src : {trend_source::observation, trend_source::statistic}) {
    ewma_options o = known_chart(0.2, 1e6);
    o.trend_on = src;
    o.trend_run = 5;
    ewma_chart<double> c(o);
    std::mt19937_64 rng(3);
    std::normal_distribution<double> noise;
    for (int i = 0; i < 100000; ++i)
      (src == trend_source::observation ? obs : stat) += c.update(noise(rng)).trend ? 1 : 0;
  }
  CHECK(stat > 3 * obs);
}

TEST_CASE("ewma: warm-up baselines (mean/sd, median/MAD) and constant warm-ups", "[ewma][baseline]") {
  std::mt19937_64 rng(8);
  std::normal_distribution<double> noise(50.0, 4.0);
  std::vector<double> warm(40);
  for (double& x : warm) x = noise(rng);
  warm[3] = 500.0;  // an outlier in the warm-up
  for (auto mode : {baseline_mode::warmup, baseline_mode::warmup_robust}) {
    ewma_options o;
    o.baseline.mode = mode;
    o.baseline.warmup = 40;
    ewma_chart<double> c(o);
    for (std::size_t i = 0; i < warm.size(); ++i) {
      CHECK_FALSE(c.ready());
      CHECK(c.update(warm[i]).state == chart_state::warming_up);
    }
    REQUIRE(c.ready());
    if (mode == baseline_mode::warmup) {
      const auto m = failslow::stats::moments(warm);
      CHECK(c.in_control().mu == Approx(m.mean()).epsilon(1e-12));
      CHECK(c.in_control().sigma == Approx(m.stddev()).epsilon(1e-12));
    } else {
      CHECK(c.in_control().mu == Approx(failslow::stats::median(warm)).epsilon(1e-12));
      CHECK(c.in_control().sigma == Approx(failslow::stats::mad_normal(warm)).epsilon(1e-12));
      CHECK(c.in_control().sigma < 6.0);  // the outlier did not inflate it
    }
    CHECK(c.statistic() == c.in_control().mu);
  }
  // A constant warm-up cannot calibrate: the chart keeps warming up on the latest values.
  ewma_options o;
  o.baseline.warmup = 5;
  ewma_chart<double> c(o);
  for (int i = 0; i < 20; ++i) CHECK(c.update(7.0).state == chart_state::warming_up);
  CHECK(c.warmup_extensions() == 15);
  // One different value: the MAD of 7, 7, 7, 7, 7.5 is still 0, so the sd is the sigma.
  c.update(7.5);
  REQUIRE(c.ready());
  CHECK(c.in_control().mu == 7.0);
  CHECK(c.in_control().sigma == Approx(std::sqrt(0.05)).epsilon(1e-12));
}

TEST_CASE("ewma: running baseline follows a slow drift and stays consistent for sigma", "[ewma][baseline]") {
  ewma_options o;
  o.baseline.mode = baseline_mode::running;
  o.baseline.warmup = 50;
  o.baseline.running_weight = 0.01;
  o.baseline.running_clip = 1.5;  // heavy clipping: sigma is consistent only with the correction
  o.trend_run = 0;
  ewma_chart<double> c(o);
  std::mt19937_64 rng(21);
  std::normal_distribution<double> noise(0.0, 2.0);
  double sigma_sum = 0;
  int counted = 0;
  for (int i = 0; i < 40000; ++i) {
    c.update(100.0 + noise(rng));
    if (i > 2000) {
      sigma_sum += c.in_control().sigma;
      ++counted;
    }
  }
  CHECK(sigma_sum / counted == Approx(2.0).epsilon(0.03));
  // Slow drift: 100 -> 120 over 20000 points (0.5 sigma per 1000 points); the centre follows.
  for (int i = 0; i < 20000; ++i) c.update(100.0 + 20.0 * i / 20000.0 + noise(rng));
  CHECK(c.in_control().mu == Approx(120.0).margin(1.5));
  // The same drift against a fixed baseline alarms.
  ewma_options f = o;
  f.baseline.mode = baseline_mode::known;
  f.baseline.mu = 100.0;
  f.baseline.sigma = 2.0;
  ewma_chart<double> fixed(f);
  int fixed_alarms = 0;
  for (int i = 0; i < 20000; ++i)
    fixed_alarms += fixed.update(100.0 + 20.0 * i / 20000.0 + noise(rng)).state == chart_state::alarm ? 1 : 0;
  CHECK(fixed_alarms > 5000);
}

TEST_CASE("ewma: a step change alarms, and reset_after_alarm restarts", "[ewma]") {
  for (bool reset : {false, true}) {
    ewma_options o = known_chart(0.2, 2.962);
    o.reset_after_alarm = reset;
    ewma_chart<double> c(o);
    std::mt19937_64 rng(4);
    std::normal_distribution<double> noise;
    for (int i = 0; i < 200; ++i) c.update(noise(rng));
    int first = -1, alarms = 0;
    for (int i = 0; i < 100; ++i) {
      const auto p = c.update(3.0 + noise(rng));
      if (p.state == chart_state::alarm) {
        ++alarms;
        if (first < 0) first = i;
        CHECK(p.direction == 1);
      }
    }
    CHECK(first >= 0);
    CHECK(first < 10);
    if (reset)
      CHECK(alarms < 70);  // z restarts at mu after each alarm
    else
      CHECK(alarms > 90);  // z stays above the limit
  }
}

TEST_CASE("ewma: non-finite values are skipped and counted, bad options throw", "[ewma][errors]") {
  ewma_chart<float> c(known_chart(0.2, 3.0));
  c.update(0.5f);
  const double z = c.statistic();
  const auto p = c.update(std::numeric_limits<float>::quiet_NaN());
  CHECK(p.skipped);
  CHECK(c.statistic() == z);
  c.update(std::numeric_limits<float>::infinity());
  CHECK(c.skipped() == 2);
  CHECK(c.count() == 3);
  ewma_options bad = known_chart(0.2, 3.0);
  bad.lambda = 1.5;
  CHECK_THROWS_AS(ewma_chart<double>(bad), failslow::invalid_argument);
  bad = known_chart(0.2, -1.0);
  CHECK_THROWS_AS(ewma_chart<double>(bad), failslow::invalid_argument);
  bad = known_chart(0.2, 3.0);
  bad.baseline.sigma = 0.0;
  CHECK_THROWS_AS(ewma_chart<double>(bad), failslow::invalid_argument);
  bad.baseline.mode = baseline_mode::warmup;
  bad.baseline.warmup = 1;
  CHECK_THROWS_AS(ewma_chart<double>(bad), failslow::invalid_argument);
}

TEST_CASE("run rules: each pattern fires its rule", "[ewma][rules]") {
  auto fires = [](std::uint32_t rule, const std::vector<double>& us, chart_side side = chart_side::both) {
    run_rules_checker r(rule, side);
    std::uint32_t last = 0;
    for (double u : us) last = r.check(u);
    return (last & rule) != 0;
  };
  CHECK(fires(we1_beyond_3sigma, {0, 3.2}));
  CHECK_FALSE(fires(we1_beyond_3sigma, {0, 2.9}));
  CHECK(fires(we1_beyond_3sigma, {-3.5}));
  CHECK_FALSE(fires(we1_beyond_3sigma, {-3.5}, chart_side::upper));
  CHECK(fires(we2_2of3_beyond_2sigma, {2.5, 0.0, 2.1}));
  CHECK_FALSE(fires(we2_2of3_beyond_2sigma, {2.5, 0.0, -2.1}));  // not the same side
  CHECK(fires(we3_4of5_beyond_1sigma, {1.5, 1.2, 0.3, 1.1, 1.9}));
  CHECK_FALSE(fires(we3_4of5_beyond_1sigma, {1.5, 0.2, 0.3, 1.1, 1.9}));
  CHECK(fires(we4_8_same_side, std::vector<double>(8, -0.1)));
  CHECK_FALSE(fires(we4_8_same_side, std::vector<double>(7, -0.1)));
  CHECK(fires(nelson2_9_same_side, std::vector<double>(9, 0.2)));
  CHECK_FALSE(fires(nelson2_9_same_side, {0.2, 0.2, 0.2, 0.2, -0.2, 0.2, 0.2, 0.2, 0.2}));
  CHECK(fires(nelson3_6_trend, {-1.0, -0.5, 0.0, 0.1, 0.2, 0.9}));
  CHECK(fires(nelson3_6_trend, {0.9, 0.2, 0.1, 0.0, -0.5, -1.0}));
  CHECK_FALSE(fires(nelson3_6_trend, {0.9, 0.2, 0.1, 0.0, -0.5, -1.0}, chart_side::upper));
  CHECK_FALSE(fires(nelson3_6_trend, {-1.0, -0.5, 0.0, 0.1, 0.1, 0.9}));
  std::vector<double> alt;
  for (int i = 0; i < 14; ++i) alt.push_back(i % 2 ? 0.5 : -0.5);
  CHECK(fires(nelson4_14_alternating, alt));
  alt[7] = alt[6];
  CHECK_FALSE(fires(nelson4_14_alternating, alt));
  CHECK(fires(nelson7_15_within_1sigma, std::vector<double>(15, 0.3)));
  CHECK_FALSE(fires(nelson7_15_within_1sigma, std::vector<double>(14, 0.3)));
  CHECK(fires(nelson8_8_outside_1sigma, {1.5, -1.5, 1.2, -1.1, 2.0, -2.0, 1.3, -1.4}));
  CHECK_FALSE(fires(nelson8_8_outside_1sigma, std::vector<double>(8, 1.5)));  // one side only
}

TEST_CASE("run rules on the EWMA chart raise trend warnings, WE1 rate is 0.0027 on normal data", "[ewma][rules]") {
  ewma_options o = known_chart(0.2, 1e6);
  o.rules = we1_beyond_3sigma;
  ewma_chart<double> c(o);
  std::mt19937_64 rng(77);
  std::normal_distribution<double> noise;
  const int n = 1000000;
  int fired = 0;
  for (int i = 0; i < n; ++i) {
    const auto p = c.update(noise(rng));
    if (p.rules_fired & we1_beyond_3sigma) {
      ++fired;
      CHECK(p.state == chart_state::trend_warning);
    }
  }
  const double expected = 0.0026998 * n;  // 2 (1 - Phi(3))
  CHECK(std::abs(fired - expected) < 5.0 * std::sqrt(expected));
}
