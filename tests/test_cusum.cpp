// Page's two-sided CUSUM (failslow/detect/cusum.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <failslow/detect/cusum.hpp>
#include <limits>
#include <random>
#include <vector>

#include "support/detect_reference.hpp"

using namespace failslow::detect;

namespace {
cusum_options known(double k, double h, chart_side side) {
  cusum_options o;
  o.k = k;
  o.h = h;
  o.side = side;
  o.baseline.mode = baseline_mode::known;
  o.baseline.mu = 0.0;
  o.baseline.sigma = 1.0;
  return o;
}
}  // namespace

TEST_CASE("cusum: one-sided ARL matches the Brook-Evans chain by seeded simulation", "[cusum][arl]") {
  const auto j = failslow_test::detect_fixture("ewma_arl.json");
  int checked = 0;
  for (const auto& e : j["cusum"]) {
    const double k = e["k"], h = e["h"], shift = e["shift"], ref = e["arl_upper"];
    if (k != 0.5) continue;
    cusum<double> chart(known(k, h, chart_side::upper));
    std::mt19937_64 rng(static_cast<std::uint64_t>(h * 10 + shift));
    std::normal_distribution<double> noise(shift, 1.0);
    const int runs = shift > 0 ? 20000 : 10000;
    double s = 0, s2 = 0;
    for (int r = 0; r < runs; ++r) {
      chart.restart();
      double len = 0;
      for (;;) {
        ++len;
        if (chart.update(noise(rng)).state == chart_state::alarm) break;
      }
      s += len;
      s2 += len * len;
    }
    const double mean = s / runs, se = std::sqrt((s2 / runs - mean * mean) / runs);
    INFO("k " << k << " h " << h << " shift " << shift << ": simulated " << mean << " +- " << se << ", chain " << ref);
    CHECK(std::abs(mean - ref) < 4.0 * se);
    CHECK(se < 0.012 * ref);
    ++checked;
  }
  CHECK(checked == 4);
  // h = 4 and h = 5 differ by far more than the tolerance: the check discriminates.
}

TEST_CASE("cusum: sums follow Page's recursion, alarm, direction and change start", "[cusum]") {
  cusum<double> c(known(0.5, 4.0, chart_side::both));
  const std::vector<double> xs = {0.2, -0.3, 1.0, 2.0, 1.5, 1.8, 2.2};
  double sp = 0, sm = 0;
  std::uint64_t last_zero_up = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const auto p = c.update(xs[i]);
    sp = std::max(0.0, sp + xs[i] - 0.5);
    sm = std::max(0.0, sm - xs[i] - 0.5);
    if (sp == 0.0) last_zero_up = i + 1;
    CHECK(p.index == i);
    if (sp > 4.0) {
      CHECK(p.state == chart_state::alarm);
      CHECK(p.direction == 1);
      CHECK(p.change_start == last_zero_up);
      CHECK(p.change_start == 2);  // the shift began at index 2
      CHECK(c.upper() == 0.0);     // reset after the alarm
      break;
    }
    CHECK(p.upper == Approx(sp));
    CHECK(p.lower == Approx(sm));
    CHECK(p.state == chart_state::in_control);
  }
  CHECK(c.alarms() == 1);
}

TEST_CASE("cusum: downward shifts, one-sided charts, no reset", "[cusum]") {
  cusum<double> both(known(0.5, 5.0, chart_side::both));
  cusum<double> up(known(0.5, 5.0, chart_side::upper));
  int both_alarm = -1, up_alarms = 0;
  for (int i = 0; i < 30; ++i) {
    const auto p = both.update(-1.5);
    if (p.state == chart_state::alarm && both_alarm < 0) {
      both_alarm = i;
      CHECK(p.direction == -1);
      CHECK(p.change_start == 0);
    }
    up_alarms += up.update(-1.5).state == chart_state::alarm ? 1 : 0;
  }
  CHECK(both_alarm == 5);  // S- = 1, 2, ..., 6 > 5 at the 6th value
  CHECK(up_alarms == 0);
  cusum_options o = known(0.5, 5.0, chart_side::upper);
  o.reset_after_alarm = false;
  cusum<double> keep(o);
  int alarms = 0;
  for (int i = 0; i < 20; ++i) alarms += keep.update(2.0).state == chart_state::alarm ? 1 : 0;
  CHECK(alarms == 17);  // S+ = 1.5 i > 5 from i = 4 (0-based 3) on
}

TEST_CASE("cusum: warm-up, skipped values and errors", "[cusum][errors]") {
  cusum_options o;
  o.baseline.mode = baseline_mode::warmup;
  o.baseline.warmup = 4;
  cusum<float> c(o);
  for (float x : {10.0f, 12.0f, 11.0f}) CHECK(c.update(x).state == chart_state::warming_up);
  CHECK(c.update(std::numeric_limits<float>::quiet_NaN()).skipped);
  c.update(9.0f);
  REQUIRE(c.ready());
  CHECK(c.in_control().mu == Approx(10.5));
  CHECK(c.in_control().sigma == Approx(std::sqrt(5.0 / 3.0)));
  CHECK(c.skipped() == 1);
  CHECK(c.count() == 5);
  cusum_options flat;
  flat.baseline.warmup = 3;
  cusum<double> f(flat);
  for (int i = 0; i < 6; ++i) f.update(1.0);
  CHECK_FALSE(f.ready());
  CHECK(f.warmup_extensions() == 3);
  f.update(2.0);
  CHECK(f.ready());

  cusum_options bad = known(-0.1, 5.0, chart_side::both);
  CHECK_THROWS_AS(cusum<double>(bad), failslow::invalid_argument);
  bad = known(0.5, 0.0, chart_side::both);
  CHECK_THROWS_AS(cusum<double>(bad), failslow::invalid_argument);
}
