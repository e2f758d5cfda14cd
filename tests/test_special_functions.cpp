// The numerical building blocks that replace Boost.Math in the library: incomplete gamma and beta
// functions and the gamma inverse (against 40-digit mpmath values), Brent's bracketed root finder
// and adaptive Gauss-Kronrod quadrature (against closed forms).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/stats/detail/bracketed_root.hpp>
#include <failslow/stats/detail/gauss_kronrod.hpp>
#include <failslow/stats/detail/incomplete_beta.hpp>
#include <failslow/stats/detail/incomplete_gamma.hpp>
#include <limits>
#include <random>

#include "support/fixtures.hpp"

using namespace failslow::stats::detail;

namespace {
double relative(double got, double want) {
  if (got == want) return 0;
  return std::abs(got - want) / std::max(std::abs(want), std::numeric_limits<double>::min());
}
// A tail of 1e-210 is exp(-483): the exponent's own rounding (eps x 483) bounds any double result.
double tail_tolerance(double base, double value) { return base + 2.3e-16 * std::abs(std::log(value)); }
}  // namespace

TEST_CASE("incomplete gamma P and Q match 40-digit values in both tails (a 0.5 to 5000)") {
  const auto fx = failslow_test::load_fixture("stats/special_functions.json");
  REQUIRE(fx["gamma"].size() > 150);
  double worst_p = 0, worst_q = 0;
  for (const auto& e : fx["gamma"]) {
    const double a = e["a"], x = e["x"], p = e["p"], q = e["q"];
    INFO("a " << a << " x " << x);
    // Values near the smallest normal double are compared absolutely.
    if (p > 1e-290) worst_p = std::max(worst_p, relative(gamma_p(a, x), p) / tail_tolerance(5e-14, p));
    if (q > 1e-290) worst_q = std::max(worst_q, relative(gamma_q(a, x), q) / tail_tolerance(5e-14, q));
  }
  INFO("worst error in units of 5e-14 + 2.3e-16 |ln value|: P " << worst_p << ", Q " << worst_q);
  CHECK(worst_p <= 1);
  CHECK(worst_q <= 1);
}

TEST_CASE("gamma inverses (the chi-square quantile) match 40-digit roots from 1e-300 to 1 - 1e-10") {
  const auto fx = failslow_test::load_fixture("stats/special_functions.json");
  REQUIRE(fx["gamma_inverse"].size() > 200);
  for (const auto& e : fx["gamma_inverse"]) {
    const double a = e["a"], t = e["t"], lo = e["x_lower"], hi = e["x_upper"];
    INFO("a " << a << " t " << t);
    CHECK(relative(gamma_p_inverse(a, t), lo) < 1e-13);
    CHECK(relative(gamma_q_inverse(a, t), hi) < 1e-13);
  }
  // A lower quantile below the smallest double is 0, the ends are exact.
  CHECK(gamma_p_inverse(0.5, 1e-300) == 0.0);
  CHECK(gamma_p_inverse(3, 0) == 0.0);
  CHECK(gamma_q_inverse(3, 1) == 0.0);
  CHECK(std::isinf(gamma_p_inverse(3, 1)));
  CHECK(std::isinf(gamma_q_inverse(3, 0)));
  CHECK(std::isnan(gamma_p_inverse(0, 0.5)));
  CHECK(std::isnan(gamma_p_inverse(2, 1.5)));
  CHECK(std::isnan(gamma_q_inverse(2, std::numeric_limits<double>::quiet_NaN())));
}

TEST_CASE("gamma inverses round-trip on random a and tails down to 1e-300") {
  // P(a, P^-1(a, t)) = t up to the problem's condition (d ln tail / d ln x) wherever the answer is
  // a normal double. Found by this test: a bisection step that underflowed (sqrt(lo * hi) of two
  // values near 1e-166) and returned 0 for a lower tail of 1e-205.
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> u(0, 1);
  double worst = 0;
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const double a = std::exp(std::log(0.3) + u(rng) * std::log(2e4 / 0.3));
    double t = std::exp(-u(rng) * 300 * std::log(10.0));
    if (u(rng) < 0.3) t = 1 - t * 1e-3;
    if (!(t > 0 && t < 1)) continue;
    const bool upper = i % 2 == 1;
    const double x = upper ? gamma_q_inverse(a, t) : gamma_p_inverse(a, t);
    INFO("a " << a << " t " << t << " upper " << upper << " x " << x);
    REQUIRE(x >= 0);
    REQUIRE(std::isfinite(x));
    if (x < 1e-300) continue;  // a subnormal answer has few significant bits
    const double back = upper ? gamma_q(a, x) : gamma_p(a, x);
    const double condition = std::max(1.0, gamma_prefix(a, x) / back);
    worst = std::max(worst, relative(back, t) / condition);
    ++checked;
  }
  INFO("worst round-trip error over the condition " << worst << " on " << checked << " points");
  CHECK(checked > 10000);
  CHECK(worst < 1e-12);
}

TEST_CASE("incomplete beta matches 40-digit values in both tails (b to 4993.5)") {
  const auto fx = failslow_test::load_fixture("stats/special_functions.json");
  REQUIRE(fx["beta"].size() > 800);
  double worst_lower = 0, worst_upper = 0;
  for (const auto& e : fx["beta"]) {
    const double a = e["a"], b = e["b"], x = e["x"], lower = e["lower"], upper = e["upper"];
    INFO("a " << a << " b " << b << " x " << x);
    if (lower > 1e-290)
      worst_lower = std::max(worst_lower, relative(beta_lower(a, b, x), lower) / tail_tolerance(5e-13, lower));
    if (upper > 1e-290)
      worst_upper = std::max(worst_upper, relative(beta_upper(a, b, x), upper) / tail_tolerance(5e-13, upper));
  }
  INFO("worst error in units of 5e-13 + 2.3e-16 |ln value|: lower " << worst_lower << ", upper " << worst_upper);
  CHECK(worst_lower <= 1);
  CHECK(worst_upper <= 1);
}

TEST_CASE("incomplete gamma and beta: edges and invalid arguments") {
  CHECK(gamma_p(2, 0) == 0.0);
  CHECK(gamma_q(2, 0) == 1.0);
  CHECK(gamma_p(2, std::numeric_limits<double>::infinity()) == 1.0);
  CHECK(gamma_q(2, std::numeric_limits<double>::infinity()) == 0.0);
  CHECK(gamma_p(1, 2) == Approx(1 - std::exp(-2.0)).epsilon(1e-15));  // P(1, x) = 1 - e^-x
  CHECK(gamma_q(1, 40) == Approx(std::exp(-40.0)).epsilon(1e-14));
  CHECK(gamma_p(0.5, 2) == Approx(std::erf(std::sqrt(2.0))).epsilon(1e-15));  // P(1/2, x) = erf(sqrt x)
  CHECK(std::isnan(gamma_p(0, 1)));
  CHECK(std::isnan(gamma_q(-1, 1)));
  CHECK(std::isnan(gamma_p(1, -1)));
  CHECK(std::isnan(gamma_q(1, std::numeric_limits<double>::quiet_NaN())));
  CHECK(beta_lower(2, 3, 0) == 0.0);
  CHECK(beta_upper(2, 3, 0) == 1.0);
  CHECK(beta_lower(2, 3, 1) == 1.0);
  CHECK(beta_upper(2, 3, 1) == 0.0);
  CHECK(beta_lower(1, 1, 0.3) == Approx(0.3).epsilon(1e-15));   // uniform
  CHECK(beta_lower(2, 1, 0.3) == Approx(0.09).epsilon(1e-15));  // x^2
  CHECK(std::isnan(beta_lower(0, 1, 0.5)));
  CHECK(std::isnan(beta_upper(1, -2, 0.5)));
  CHECK(std::isnan(beta_lower(1, 1, 1.5)));
  CHECK(std::isnan(beta_upper(1, 1, std::numeric_limits<double>::quiet_NaN())));
}

TEST_CASE("bracketed_root narrows to the relative width asked for and keeps the sign change") {
  SECTION("smooth roots, in few evaluations") {
    struct problem {
      double (*f)(double);
      double a, b, root;
    };
    const problem problems[] = {
        {[](double x) { return x * x - 2; }, 0, 2, std::sqrt(2.0)},
        {[](double x) { return std::cos(x) - x; }, 0, 1, 0.7390851332151607},
        {[](double x) { return std::exp(x) - 1e6; }, 0, 100, std::log(1e6)},
        {[](double x) { return std::pow(x - 3, 3); }, 0, 10, 3},  // triple root: flat near it
        {[](double x) { return std::log(x) - 40; }, 1, 1e30, std::exp(40.0)},
    };
    for (const auto& p : problems) {
      const auto r = bracketed_root(p.f, p.a, p.b, 52, 200);
      INFO("root " << p.root << " bracket [" << r.lo << ", " << r.hi << "] after " << r.iterations);
      CHECK(r.lo <= r.hi);
      CHECK(r.hi - r.lo <= 8 * std::numeric_limits<double>::epsilon() * std::abs(p.root));
      CHECK(relative(0.5 * (r.lo + r.hi), p.root) < 1e-14);
      CHECK(r.iterations < 200);
      if (r.lo != r.hi) CHECK(std::signbit(p.f(r.lo)) != std::signbit(p.f(r.hi)));
    }
    // Superlinear on a smooth simple root: far fewer than bisection's 50-odd halvings.
    CHECK(bracketed_root([](double x) { return x * x - 2; }, 0, 2).iterations < 15);
  }
  SECTION("a coarser tolerance stops earlier") {
    auto f = [](double x) { return std::exp(x) - 5; };
    const auto fine = bracketed_root(f, 0, 10, 52), coarse = bracketed_root(f, 0, 10, 20);
    CHECK(coarse.iterations <= fine.iterations);
    CHECK(coarse.hi - coarse.lo <= std::ldexp(1.0, -19) * 2);
    CHECK(relative(0.5 * (coarse.lo + coarse.hi), std::log(5.0)) < 1e-6);
  }
  SECTION("an exact zero, an end that is the root, no sign change, NaN, the iteration limit") {
    auto line = [](double x) { return x - 0.5; };
    const auto exact = bracketed_root(line, 0, 1);
    CHECK(exact.lo == 0.5);
    CHECK(exact.hi == 0.5);
    CHECK(bracketed_root(line, 0.5, 1).lo == 0.5);
    const auto none = bracketed_root([](double x) { return x * x + 1; }, -1, 2);
    CHECK(none.iterations == 0);
    CHECK(none.lo == -1);
    CHECK(none.hi == 2);
    CHECK(bracketed_root([](double) { return std::numeric_limits<double>::quiet_NaN(); }, 0, 1).iterations == 0);
    const auto limited = bracketed_root([](double x) { return std::pow(x - 3, 3); }, 0, 10, 52, 4);
    CHECK(limited.iterations == 4);
    CHECK(limited.lo <= 3);
    CHECK(limited.hi >= 3);
  }
}

TEST_CASE("gauss_kronrod15: exact on polynomials of degree 22, adaptive where it must be") {
  // K15 integrates degree <= 22 exactly: x^22 on [0, 1] = 1/23 with no halving (max_depth 0).
  CHECK(gauss_kronrod15([](double x) { return std::pow(x, 22); }, 0, 1, 0) == Approx(1.0 / 23).epsilon(1e-15));
  CHECK(gauss_kronrod15([](double x) { return 3 * x * x - 2 * x + 1; }, -2, 3, 0) ==
        Approx(27 + 8 - 5 + 5).epsilon(1e-15));
  // Smooth functions against closed forms.
  CHECK(gauss_kronrod15([](double x) { return std::exp(x); }, 0, 5) == Approx(std::exp(5.0) - 1).epsilon(1e-14));
  CHECK(gauss_kronrod15([](double x) { return 1 / (1 + x * x); }, -50, 50) ==
        Approx(2 * std::atan(50.0)).epsilon(1e-12));
  // A sharp peak that a single K15 on the interval misses; the halving finds it.
  auto peak = [](double x) { return std::exp(-1e4 * (x - 0.3) * (x - 0.3)); };
  const double want = std::sqrt(3.14159265358979323846 / 1e4);
  CHECK(std::abs(gauss_kronrod15(peak, 0, 1, 0) - want) > 1e-3 * want);
  CHECK(gauss_kronrod15(peak, 0, 1) == Approx(want).epsilon(1e-11));
  // sqrt on [0, 1] (an infinite derivative at 0): the error estimate keeps halving towards 0.
  CHECK(gauss_kronrod15([](double x) { return std::sqrt(x); }, 0, 1) == Approx(2.0 / 3).epsilon(1e-10));
  // Reversed and empty intervals.
  CHECK(gauss_kronrod15([](double x) { return x; }, 1, 0) == Approx(-0.5).epsilon(1e-15));
  CHECK(gauss_kronrod15([](double x) { return x; }, 2, 2) == 0.0);
}
