// Bayesian online change-point detection (failslow/detect/bocpd.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <failslow/detect/bocpd.hpp>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

using namespace failslow::detect;

namespace {
bocpd_options known_prior() {
  bocpd_options o;
  o.baseline.mode = baseline_mode::known;
  o.baseline.mu = 0.0;
  o.baseline.sigma = 1.0;
  return o;
}

// Student-t density with nu degrees of freedom, location m, squared scale s2 (reference).
double student_t(double x, double nu, double m, double s2) {
  const double z = (x - m) * (x - m) / s2;
  return std::exp(std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2)) / std::sqrt(nu * 3.14159265358979323846 * s2) *
         std::pow(1 + z / nu, -(nu + 1) / 2);
}
}  // namespace

TEST_CASE("bocpd: the first updates equal the Adams-MacKay recursion by hand", "[bocpd]") {
  bocpd_options o = known_prior();
  o.hazard = 0.1;
  bocpd<double> b(o);
  const double k0 = o.kappa0, a0 = o.alpha0, b0 = (a0 - 1.0);  // sigma = 1
  // x1: one run hypothesis (r = 0, the prior)
  const double x1 = 0.7, x2 = -0.4;
  b.update(x1);
  const double p1 = student_t(x1, 2 * a0, 0.0, b0 * (k0 + 1) / (a0 * k0));
  // after x1: P(r=0) = H, P(r=1) = 1 - H (one hypothesis, normalised)
  REQUIRE(b.run_length_posterior().size() == 2);
  CHECK(b.run_length_posterior()[0] == Approx(0.1));
  CHECK(b.run_length_posterior()[1] == Approx(0.9));
  (void)p1;
  b.update(x2);
  // r=0 (prior) and r=1 (fitted to x1) predict x2
  const double mu1 = (k0 * 0.0 + x1) / (k0 + 1), k1 = k0 + 1, a1 = a0 + 0.5;
  const double b1 = b0 + k0 * x1 * x1 / (2 * (k0 + 1));
  const double q0 = 0.1 * student_t(x2, 2 * a0, 0.0, b0 * (k0 + 1) / (a0 * k0));
  const double q1 = 0.9 * student_t(x2, 2 * a1, mu1, b1 * (k1 + 1) / (a1 * k1));
  const double total = q0 + q1;
  const auto& post = b.run_length_posterior();
  REQUIRE(post.size() == 3);
  CHECK(post[0] == Approx(0.1));
  CHECK(post[1] == Approx(0.9 * q0 / total));
  CHECK(post[2] == Approx(0.9 * q1 / total));
  CHECK(std::accumulate(post.begin(), post.end(), 0.0) == Approx(1.0));
}

TEST_CASE("bocpd: planted shifts found within +-2 samples, stationary noise mostly quiet", "[bocpd]") {
  // Measured with this generator (100 series per SNR): 63 % of shifts within +-2 at SNR 1, 94 % at
  // 2, 100 % at 3 and 5; about 1 false change per 1000 samples of iid noise (defaults).
  for (const double snr : {3.0, 5.0}) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(snr));
    std::normal_distribution<double> g;
    int within = 0, total = 0, extra = 0;
    for (int r = 0; r < 20; ++r) {
      bocpd_options o;  // robust warm-up of 30
      o.max_run = 300;
      bocpd<double> b(o);
      const std::uint64_t truth[] = {230, 430, 630, 830};
      bool hit[4] = {};
      double level = 50.0;
      for (std::uint64_t i = 0; i < 1030; ++i) {
        for (int k = 0; k < 4; ++k)
          if (i == truth[k]) level += k % 2 ? -snr * 2.0 : snr * 2.0;
        const auto p = b.update(level + 2.0 * g(rng));
        if (!p.change) continue;
        bool matched = false;
        for (int k = 0; k < 4 && !matched; ++k)
          if (!hit[k] && p.change_start + 2 >= truth[k] && p.change_start <= truth[k] + 2) hit[k] = matched = true;
        extra += matched ? 0 : 1;
      }
      for (bool h : hit) within += h ? 1 : 0;
      total += 4;
    }
    INFO("SNR " << snr << ": " << within << " of " << total << " within +-2, " << extra << " extra");
    CHECK(within >= 0.97 * total);
    CHECK(extra <= 2 * 20 * 2);  // a few per 1000 samples
  }
  std::mt19937_64 rng(99);
  std::normal_distribution<double> g;
  long false_changes = 0;
  bocpd_options o = known_prior();
  o.max_run = 300;
  for (int r = 0; r < 10; ++r) {
    bocpd<double> b(o);
    for (int i = 0; i < 2000; ++i) false_changes += b.update(g(rng)).change ? 1 : 0;
  }
  CHECK(false_changes <= 20 * 2);  // ~1 per 1000 expected, 20 000 samples
}

TEST_CASE("bocpd: bounded memory, long runs, outliers, skips and errors", "[bocpd][errors]") {
  bocpd_options o = known_prior();
  o.max_run = 50;
  bocpd<double> b(o);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g;
  for (int i = 0; i < 1000; ++i) b.update(g(rng));
  CHECK(b.run_length_posterior().size() == 50);
  CHECK(std::accumulate(b.run_length_posterior().begin(), b.run_length_posterior().end(), 0.0) == Approx(1.0));
  // a long quiet run keeps its MAP at the merged last cell
  CHECK(b.update(0.1).map_run_length == 49);
  const auto far = b.update(1e300);  // every density underflows: a certain change
  CHECK(far.map_run_length == 0);
  CHECK(b.restarts() == 1);
  CHECK(b.update(std::numeric_limits<double>::quiet_NaN()).skipped);
  CHECK(b.skipped() == 1);
  bocpd_options bad = known_prior();
  bad.hazard = 0.0;
  CHECK_THROWS_AS(bocpd<double>(bad), failslow::invalid_argument);
  bad = known_prior();
  bad.alpha0 = 1.0;
  CHECK_THROWS_AS(bocpd<double>(bad), failslow::invalid_argument);
  bad = known_prior();
  bad.max_run = 1;
  CHECK_THROWS_AS(bocpd<double>(bad), failslow::invalid_argument);
  bocpd<float> f;
  for (int i = 0; i < 29; ++i) CHECK(f.update(static_cast<float>(g(rng))).state == chart_state::warming_up);
  f.update(0.0f);
  CHECK(f.ready());
}
