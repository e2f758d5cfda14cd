// The sliding-window ratio gate (failslow/detect/ratio_gate.hpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/detect/ratio_gate.hpp>
#include <limits>
#include <random>
#include <vector>

#include "support/detect_reference.hpp"

using namespace failslow::detect;

TEST_CASE("ratio gate: ratios and windows equal the numpy reference", "[ratio_gate]") {
  const auto j = failslow_test::detect_fixture("ratio_gate.json");
  std::size_t windows_seen = 0;
  for (const auto& c : j["cases"]) {
    const auto x = failslow_test::to_doubles(c["x"]);
    ratio_gate_options o;
    o.window = c["window"].get<std::size_t>();
    o.open_threshold = c["open"];
    o.close_threshold = c["close"];
    o.close_after = c["close_after"].get<std::size_t>();
    const auto r = ratio_gate_scan(x, o);
    REQUIRE(r.ratios.size() == x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (c["ratios"][i].is_null())
        CHECK(std::isnan(r.ratios[i]));
      else
        CHECK(r.ratios[i] == Approx(c["ratios"][i].get<double>()).epsilon(1e-14));
    }
    REQUIRE(r.windows.size() == c["windows"].size());
    for (std::size_t w = 0; w < r.windows.size(); ++w) {
      const auto& e = c["windows"][w];
      CHECK(r.windows[w].first == e["first"].get<std::uint64_t>());
      CHECK(r.windows[w].last == e["last"].get<std::uint64_t>());
      CHECK(r.windows[w].peak_index == e["peak_index"].get<std::uint64_t>());
      CHECK(r.windows[w].peak_ratio == Approx(e["peak_ratio"].get<double>()).epsilon(1e-14));
    }
    windows_seen += r.windows.size();
    CHECK(r.skipped == 0);
  }
  CHECK(windows_seen >= 8);
}

TEST_CASE("ratio gate: streaming states, hysteresis and events", "[ratio_gate]") {
  ratio_gate_options o;
  o.window = 4;
  o.open_threshold = 1.5;
  o.close_threshold = 1.2;
  ratio_gate<double> g(o);
  const std::vector<double> xs = {10, 10, 10, 10, 16, 13, 12.5, 11, 10, 10};
  // ratios (median of the previous 4):        1.6 1.3 12.5/11.5 ...
  std::vector<gate_state> states;
  std::vector<gate_event> events;
  for (double x : xs) {
    const auto p = g.update(x);
    states.push_back(p.state);
    events.push_back(p.event);
    if (p.event == gate_event::closed) {
      CHECK(p.window.first == 4);
      CHECK(p.window.last == 5);  // 13 (ratio 1.3 >= 1.2) extends it; 12.5 (1.087) closes it
      CHECK(p.window.peak_index == 4);
      CHECK(p.window.peak_ratio == Approx(1.6));
      CHECK(p.window.length() == 2);
    }
  }
  CHECK(states[2] == gate_state::warming_up);
  CHECK(states[3] == gate_state::closed);  // the 4th value fills the baseline window
  CHECK(events[4] == gate_event::opened);
  CHECK(states[4] == gate_state::open);
  CHECK(states[5] == gate_state::open);
  CHECK(events[6] == gate_event::closed);
  CHECK(states[6] == gate_state::closed);
  CHECK(std::count(events.begin(), events.end(), gate_event::closed) == 1);
  gate_window w;
  CHECK_FALSE(g.finish(w));
}

TEST_CASE("ratio gate: close_after needs consecutive low samples", "[ratio_gate]") {
  ratio_gate_options o;
  o.window = 3;
  o.open_threshold = 1.5;
  o.close_threshold = 1.2;
  o.close_after = 2;
  const std::vector<double> xs = {10, 10, 10, 20, 10, 20, 10, 10, 10};
  const auto r = ratio_gate_scan(xs, o);
  // 20 opens (r 2); 10 is low once; 20 extends (its baseline median is 10); two lows close.
  REQUIRE(r.windows.size() == 1);
  CHECK(r.windows[0].first == 3);
  CHECK(r.windows[0].last == 5);
}

TEST_CASE("ratio gate: a sustained slowdown closes by itself unless the baseline is frozen", "[ratio_gate]") {
  std::vector<double> xs(40, 100.0);
  for (std::size_t i = 20; i < 40; ++i) xs[i] = 150.0;
  ratio_gate_options o;
  o.window = 8;
  const auto rolling = ratio_gate_scan(xs, o);
  REQUIRE(rolling.windows.size() == 1);
  CHECK(rolling.windows[0].first == 20);
  CHECK(rolling.windows[0].last == 24);  // 4 of 8 slow: median 125, ratio 1.2; 5 of 8: ratio 1
  o.freeze_baseline_while_open = true;
  const auto frozen = ratio_gate_scan(xs, o);
  REQUIRE(frozen.windows.size() == 1);
  CHECK(frozen.windows[0].first == 20);
  CHECK(frozen.windows[0].last == 39);  // still open at the end: closed by finish()
}

TEST_CASE("ratio gate: noise alone stays quiet, planted slow steps are found", "[ratio_gate]") {
  std::mt19937_64 rng(17);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::vector<double> xs(5000);
  for (double& x : xs) x = 200.0 * std::exp(noise(rng));
  const auto quiet = ratio_gate_scan(xs, {});
  CHECK(quiet.windows.empty());  // 1.2 is 9 sds of 2 % noise away
  for (std::size_t at : {1000u, 2500u, 4000u})
    for (std::size_t i = at; i < at + 3; ++i) xs[i] *= 1.4;
  const auto found = ratio_gate_scan(xs, {});
  REQUIRE(found.windows.size() == 3);
  std::size_t k = 0;
  for (std::size_t at : {1000u, 2500u, 4000u}) {
    CHECK(found.windows[k].first == at);
    CHECK(found.windows[k].last == at + 2);
    CHECK(found.windows[k].peak_ratio == Approx(1.4).epsilon(0.1));
    ++k;
  }
}

TEST_CASE("ratio gate: bad values are skipped and counted, bad options throw", "[ratio_gate][errors]") {
  ratio_gate<float> g;
  for (int i = 0; i < 10; ++i) g.update(5.0f);
  CHECK(g.update(std::numeric_limits<float>::quiet_NaN()).event == gate_event::skipped);
  CHECK(g.update(-1.0f).event == gate_event::skipped);
  CHECK(g.update(0.0f).event == gate_event::skipped);
  const auto p = g.update(10.0f);
  CHECK(p.index == 13);
  CHECK(p.ratio == Approx(2.0));
  CHECK(g.skipped() == 3);
  const std::vector<int> ints = {10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 30};
  CHECK(ratio_gate_scan(ints, {}).windows.size() == 1);

  ratio_gate_options bad;
  bad.window = 0;
  CHECK_THROWS_AS(ratio_gate<double>(bad), failslow::invalid_argument);
  bad = {};
  bad.close_threshold = 2.0;
  CHECK_THROWS_AS(ratio_gate<double>(bad), failslow::invalid_argument);
  bad = {};
  bad.min_history = 11;
  CHECK_THROWS_AS(ratio_gate<double>(bad), failslow::invalid_argument);
  bad = {};
  bad.close_after = 0;
  CHECK_THROWS_AS(ratio_gate<double>(bad), failslow::invalid_argument);
  bad = {};
  bad.open_threshold = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(ratio_gate<double>(bad), failslow::invalid_argument);
}
