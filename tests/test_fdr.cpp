// Benjamini-Hochberg / -Yekutieli (failslow/detect/fdr.hpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/detect/fdr.hpp>
#include <limits>
#include <random>
#include <vector>

#include "support/detect_reference.hpp"

using namespace failslow::detect;

TEST_CASE("fdr: adjusted p-values and rejections equal the numpy reference", "[fdr]") {
  const auto j = failslow_test::detect_fixture("fdr.json");
  for (const auto& c : j["cases"]) {
    const auto p = failslow_test::to_doubles(c["p"]);
    const auto method = c["method"] == "bh" ? fdr_method::benjamini_hochberg : fdr_method::benjamini_yekutieli;
    INFO("m " << p.size() << " method " << c["method"]);
    const auto r = false_discovery_control(p, c["q"].get<double>(), method);
    const auto ref = failslow_test::to_doubles(c["adjusted"]);
    REQUIRE(r.adjusted.size() == ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) CHECK(r.adjusted[i] == Approx(ref[i]).epsilon(1e-13).margin(1e-300));
    CHECK(r.rejected == c["rejected"].get<std::vector<std::size_t>>());
  }
}

TEST_CASE("fdr: the step-up rule by hand", "[fdr]") {
  // m = 5, q = 0.05: thresholds i q / m = 0.01, 0.02, 0.03, 0.04, 0.05. Sorted p: 0.001, 0.011,
  // 0.029, 0.04, 0.2 -> the largest i with p_(i) <= i q / m is 4 (0.04 <= 0.04): four rejected.
  const std::vector<double> p = {0.04, 0.2, 0.001, 0.029, 0.011};
  const auto r = false_discovery_control(p, 0.05);
  CHECK(r.rejected == std::vector<std::size_t>{0, 2, 3, 4});
  CHECK(r.p_threshold == 0.04);
  // step-up: a p-value above its own threshold is still rejected when a larger one passes
  const std::vector<double> p2 = {0.012, 0.013, 0.014};  // thresholds 0.0167, 0.033, 0.05
  CHECK(false_discovery_control(p2, 0.05).rejected.size() == 3);
  const std::vector<double> p3 = {0.02, 0.5, 0.6};  // 0.02 > 0.0167: none
  CHECK(false_discovery_control(p3, 0.05).rejected.empty());
  CHECK(false_discovery_control(p3, 0.05).p_threshold == 0.0);
  // BY is stricter by c(m) = 1 + 1/2 + 1/3
  const auto by = adjust_p_values(p2, fdr_method::benjamini_yekutieli);
  const auto bh = adjust_p_values(p2);
  for (std::size_t i = 0; i < 3; ++i) CHECK(by[i] == Approx(bh[i] * (1 + 0.5 + 1.0 / 3.0)));
}

TEST_CASE("fdr: 10,000 null tests raise (almost) nothing, real effects survive", "[fdr]") {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int null_rejections = 0, raw_rejections = 0, found = 0, false_found = 0;
  const int runs = 40;
  for (int r = 0; r < runs; ++r) {
    std::vector<double> p(10000);
    for (double& x : p) x = u(rng);
    for (double x : p) raw_rejections += x <= 0.05 ? 1 : 0;
    null_rejections += static_cast<int>(false_discovery_control(p, 0.05).rejected.size());
    for (std::size_t i = 0; i < 20; ++i) p[i] = u(rng) * 1e-7;  // 20 slow ranks
    const auto res = false_discovery_control(p, 0.05);
    for (std::size_t i : res.rejected) (i < 20 ? found : false_found) += 1;
  }
  CHECK(raw_rejections > runs * 450);    // ~500 false alarms per job without control
  CHECK(null_rejections <= runs * 0.1);  // FWER of BH under the global null is q: ~2 of 40 jobs
  CHECK(found == runs * 20);
  CHECK(false_found <= runs * 2);  // FDR 5 % of ~20 discoveries = ~1 per job
}

TEST_CASE("fdr: errors", "[fdr][errors]") {
  CHECK_THROWS_AS(adjust_p_values(std::vector<double>{}), failslow::invalid_argument);
  CHECK_THROWS_AS(adjust_p_values(std::vector<double>{0.5, 1.5}), failslow::domain_error);
  CHECK_THROWS_AS(adjust_p_values(std::vector<double>{0.5, std::nan("")}), failslow::domain_error);
  CHECK_THROWS_AS(false_discovery_control(std::vector<double>{0.5}, 0.0), failslow::invalid_argument);
  CHECK(adjust_p_values(std::vector<float>{0.5f})[0] == 0.5);
}
