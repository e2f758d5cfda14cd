#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <failslow/stats/quantile_grid.hpp>
#include <failslow/stats/w1_matrix.hpp>
#include <failslow/stats/w1_matrix_rows.hpp>
#include <failslow/stats/wasserstein.hpp>
#include <limits>
#include <numeric>
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

namespace {
std::vector<double> lognormal_sample(std::size_t n, double mu, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(mu, sigma);
  std::vector<double> x(n);
  for (double& v : x) v = d(rng);
  return x;
}

}  // namespace

TEST_CASE("exact W1 equals scipy.stats.wasserstein_distance") {
  const auto fx = failslow_test::load_fixture("stats/wasserstein.json");
  for (const auto& c : fx["cases"]) {
    const auto u = doubles(c["u"]), v = doubles(c["v"]);
    std::vector<double> uw, vw;
    if (!c["u_weights"].is_null()) uw = doubles(c["u_weights"]);
    if (!c["v_weights"].is_null()) vw = doubles(c["v_weights"]);
    const double expected = c["w1"].get<double>();
    INFO("case " << c["name"].get<std::string>());
    const double got = wasserstein1(u, v, uw.empty() ? nullptr : &uw, vw.empty() ? nullptr : &vw);
    CHECK(close(got, expected, 1e-9, 1e-12 * (1 + std::abs(expected))));
    if (uw.empty() && vw.empty()) {
      auto us = u, vs = v;
      std::sort(us.begin(), us.end());
      std::sort(vs.begin(), vs.end());
      CHECK(close(wasserstein1_sorted(us.data(), us.size(), vs.data(), vs.size()), expected, 1e-9,
                  1e-12 * (1 + std::abs(expected))));
    }
  }
}

TEST_CASE("W1 is a metric, a shift by c costs |c|") {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    const auto a = lognormal_sample(300, 10, 0.3, seed);
    const auto b = lognormal_sample(451, 10.2, 0.5, seed + 100);
    const auto c = lognormal_sample(77, 9.8, 0.1, seed + 200);
    const double ab = wasserstein1(a, b), ba = wasserstein1(b, a), bc = wasserstein1(b, c), ac = wasserstein1(a, c);
    CHECK(ab == Approx(ba).epsilon(1e-12));
    CHECK(ac <= ab + bc + 1e-9 * ac);
    CHECK(ab <= ac + bc + 1e-9 * ab);
    CHECK(wasserstein1(a, a) == 0.0);
    for (double shift : {-1234.5, 0.25, 1e4}) {
      auto s = a;
      for (double& x : s) x += shift;
      CHECK(wasserstein1(a, s) == Approx(std::abs(shift)).epsilon(1e-9));
    }
  }
}

TEST_CASE("W1 between reconstructed mixtures matches the scipy quadrature") {
  const auto fx = failslow_test::load_fixture("stats/lognormal.json");
  for (const auto& pair : fx["mixture_pairs"]) {
    const auto a = mixture_from_json(pair["a"]), b = mixture_from_json(pair["b"]);
    const double expected = pair["w1"].get<double>();
    INFO("pair " << pair["name"].get<std::string>());
    const double scale = a.quantile(0.5);
    CHECK(close(wasserstein1(a, b), expected, 1e-8, 1e-12 * scale));
    CHECK(close(wasserstein1(b, a), expected, 1e-8, 1e-12 * scale));
  }
}

TEST_CASE("the quantile-vector form stays within its documented error") {
  // |W1_K - W1| <= (range_a + range_b) / K for samples (bounded supports).
  for (std::uint64_t seed : {5u, 6u, 7u}) {
    auto a = lognormal_sample(5000, 10, 0.2, seed), b = lognormal_sample(3000, 10.1, 0.3, seed + 1);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    const double exact = wasserstein1_sorted(a.data(), a.size(), b.data(), b.size());
    const double bound_scale = (a.back() - a.front()) + (b.back() - b.front());
    for (std::size_t k : {16u, 64u, 256u, 1024u}) {
      const double approx = wasserstein1_quantiles(quantile_vector_sorted(a.data(), a.size(), k),
                                                   quantile_vector_sorted(b.data(), b.size(), k));
      INFO("seed " << seed << ", K = " << k << ": relative error " << std::abs(approx - exact) / exact);
      CHECK(std::abs(approx - exact) <= bound_scale / static_cast<double>(k));
    }
  }
}

TEST_CASE("CDF-grid form: exact for step CDFs on the grid, close for smooth ones") {
  // Two empirical CDFs whose jumps lie on the grid: the step rule is exact.
  const std::vector<double> u = {1, 2, 2, 5}, v = {0, 3, 4};
  std::vector<double> grid = {0, 1, 2, 3, 4, 5};
  std::vector<double> f, g;
  for (double x : grid) {
    f.push_back(static_cast<double>(std::count_if(u.begin(), u.end(), [&](double s) { return s <= x; })) / 4.0);
    g.push_back(static_cast<double>(std::count_if(v.begin(), v.end(), [&](double s) { return s <= x; })) / 3.0);
  }
  CHECK(wasserstein1_cdf(grid, f, g, cdf_rule::step) == Approx(wasserstein1(u, v)).epsilon(1e-14));
  // Smooth CDFs: two lognormal mixtures tabulated on a fine grid, trapezoid rule.
  lognormal_component a, b;
  a.mu = std::log(20e3), a.sigma = 0.1, b.mu = std::log(22e3), b.sigma = 0.15;
  const lognormal_mixture ma({a}, false), mb({b}, false);
  std::vector<double> x, fa, fb;
  for (int i = 0; i <= 20000; ++i) {
    x.push_back(5e3 + i * 3.0);
    fa.push_back(ma.cdf(x.back()));
    fb.push_back(mb.cdf(x.back()));
  }
  CHECK(wasserstein1_cdf(x, fa, fb) == Approx(wasserstein1(ma, mb)).epsilon(1e-6));
  CHECK_THROWS_AS(wasserstein1_cdf({1.0}, {0.0}, {0.0}), invalid_argument);
  CHECK_THROWS_AS(wasserstein1_cdf({1.0, 0.5}, {0.0, 1.0}, {0.0, 1.0}), invalid_argument);
  CHECK_THROWS_AS(wasserstein1_cdf({0.0, 1.0}, {0.0}, {0.0, 1.0}), invalid_argument);
}

TEST_CASE("W1 input errors") {
  const std::vector<double> ok = {1, 2, 3}, empty;
  CHECK_THROWS_AS(wasserstein1(empty, ok), invalid_argument);
  CHECK_THROWS_AS(wasserstein1(ok, std::vector<double>{1, std::nan("")}), domain_error);
  const std::vector<double> short_w = {1};
  CHECK_THROWS_AS(wasserstein1(ok, ok, &short_w), invalid_argument);
  const std::vector<double> neg = {1, -1, 1};
  CHECK_THROWS_AS(wasserstein1(ok, ok, &neg), domain_error);
  const std::vector<double> zeros = {0, 0, 0};
  CHECK_THROWS_AS(wasserstein1(ok, ok, nullptr, &zeros), domain_error);
  CHECK_THROWS_AS(quantile_vector_sorted(ok.data(), ok.size(), 0), invalid_argument);
  CHECK_THROWS_AS(wasserstein1_quantiles(std::vector<double>{1}, std::vector<double>{1, 2}), invalid_argument);
}

TEST_CASE("W1 matrices: every form agrees with pairwise W1, any thread count") {
  std::vector<std::vector<double>> sets;
  for (std::uint64_t r = 0; r < 23; ++r)
    sets.push_back(lognormal_sample(200 + 37 * r, 10 + 0.01 * static_cast<double>(r), 0.2, r));
  const auto exact1 = w1_matrix_samples(sets, 1);
  const auto exact3 = w1_matrix_samples(sets, 3);
  CHECK(exact1 == exact3);
  quantile_matrix q(static_cast<Eigen::Index>(sets.size()), 256);
  for (std::size_t i = 0; i < sets.size(); ++i) {
    auto s = sets[i];
    std::sort(s.begin(), s.end());
    const auto v = quantile_vector_sorted(s.data(), s.size(), 256);
    for (std::size_t k = 0; k < 256; ++k) q(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) = v[k];
  }
  const auto qm1 = w1_matrix_quantiles(q, 1), qm4 = w1_matrix_quantiles(q, 4);
  CHECK(qm1 == qm4);
  for (Eigen::Index i = 0; i < exact1.rows(); ++i) {
    CHECK(exact1(i, i) == 0.0);
    for (Eigen::Index j = 0; j < exact1.cols(); ++j) {
      CHECK(exact1(i, j) == exact1(j, i));
      CHECK(exact1(i, j) ==
            Approx(wasserstein1(sets[static_cast<std::size_t>(i)], sets[static_cast<std::size_t>(j)])).epsilon(1e-12));
      std::vector<double> qi(q.row(i).data(), q.row(i).data() + 256), qj(q.row(j).data(), q.row(j).data() + 256);
      CHECK(qm1(i, j) == Approx(wasserstein1_quantiles(qi, qj)).epsilon(1e-12));
    }
  }
  // Group-restricted matrices are the sub-blocks of the full one.
  const std::vector<std::vector<int>> groups = {{0, 5, 10}, {1, 2}, {22}, {}};
  const auto blocks = w1_matrices_within_groups(q, groups, 2);
  REQUIRE(blocks.size() == 4);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    REQUIRE(static_cast<std::size_t>(blocks[g].rows()) == groups[g].size());
    for (std::size_t a = 0; a < groups[g].size(); ++a)
      for (std::size_t b = 0; b < groups[g].size(); ++b)
        CHECK(blocks[g](static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) ==
              Approx(qm1(groups[g][a], groups[g][b])).epsilon(1e-12));
  }
  CHECK_THROWS_AS(w1_matrices_within_groups(q, {{0, 23}}), domain_error);
  CHECK(w1_matrix_quantiles(q, 0) == qm1);  // threads = 0: every core, the same matrix
  // The condensed triangle in pdist's order: the full matrix's entries (float: rounded once).
  const auto n = static_cast<std::size_t>(q.rows());
  const auto c1 = w1_condensed_quantiles(q, 1), c3 = w1_condensed_quantiles(q, 3);
  const auto f2 = w1_condensed_quantiles<float>(q, 2);
  REQUIRE(static_cast<std::size_t>(c1.size()) == n * (n - 1) / 2);
  REQUIRE(static_cast<std::size_t>(f2.size()) == n * (n - 1) / 2);
  CHECK(c1 == c3);
  std::size_t at = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j, ++at) {
      REQUIRE(condensed_index(n, i, j) == at);
      const double full = qm1(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
      CHECK(c1(static_cast<Eigen::Index>(at)) == full);
      CHECK(f2(static_cast<Eigen::Index>(at)) == static_cast<float>(full));
    }
  CHECK(w1_condensed_quantiles(q.topRows(1)).size() == 0);  // one row: no pair
  quantile_matrix bad = q;
  bad(3, 3) = std::nan("");
  CHECK_THROWS_AS(w1_matrix_quantiles(bad), domain_error);
  CHECK_THROWS_AS(w1_condensed_quantiles<float>(bad), domain_error);
  std::vector<std::vector<double>> with_empty = sets;
  with_empty[4].clear();
  CHECK_THROWS_AS(w1_matrix_samples(with_empty, 2), invalid_argument);
}

TEST_CASE("W1 matrices: every SIMD path this CPU has gives the baseline path's entries bit for bit") {
  // 45 rows (register blocks, diagonal and edge blocks, two tiles at K = 259) and K = 259 (a
  // tail past the eight lanes). Each path is forced; the ones the CPU lacks are refused.
  using stats::detail::simd_path;
  std::mt19937_64 rng(29);
  std::lognormal_distribution<double> d(std::log(20e3), 0.3);
  quantile_matrix q(45, 259);
  for (Eigen::Index i = 0; i < q.rows(); ++i) {
    for (Eigen::Index t = 0; t < q.cols(); ++t) q(i, t) = d(rng);
    std::sort(q.row(i).data(), q.row(i).data() + q.cols());
  }
  const auto base = stats::detail::w1_matrix_quantiles_on(q, 1, simd_path::baseline);
  const auto base_c = stats::detail::w1_condensed_quantiles_on<float>(q, 2, simd_path::baseline);
  CHECK(w1_matrix_quantiles(q, 2) == base);  // the default path (best_simd_path)
  for (std::size_t p = 0; p < stats::detail::simd_path_count; ++p) {
    const auto path = static_cast<simd_path>(p);
    CAPTURE(stats::detail::to_string(path));
    if (!stats::detail::simd_path_supported(path)) {
      CHECK_THROWS_AS(stats::detail::w1_matrix_quantiles_on(q, 1, path), invalid_argument);
      continue;
    }
    CHECK(stats::detail::w1_matrix_quantiles_on(q, 1, path) == base);
    CHECK(stats::detail::w1_matrix_quantiles_on(q, 3, path) == base);
    CHECK(stats::detail::w1_condensed_quantiles_on<float>(q, 2, path) == base_c);
  }
  for (Eigen::Index i = 0; i < q.rows(); ++i)
    for (Eigen::Index j = 0; j < q.rows(); ++j) {
      std::vector<double> qi(q.row(i).data(), q.row(i).data() + q.cols());
      std::vector<double> qj(q.row(j).data(), q.row(j).data() + q.cols());
      CHECK(base(i, j) == wasserstein1_quantiles(qi, qj));
    }
}

TEST_CASE("W1 matrices without Eigen: row-major arrays and dense_array give the Eigen interface's entries") {
  // Random sizes (the kernel's blocks, edges and tails), one thread and three.
  std::mt19937_64 rng(31);
  for (const auto& [n, k] : {std::pair<std::size_t, std::size_t>{1, 8}, {2, 1}, {7, 3}, {19, 64}, {37, 261}}) {
    CAPTURE(n, k);
    std::lognormal_distribution<double> d(std::log(1e4), 0.4);
    failslow::dense_array<double, 2> q({n, k});
    quantile_matrix qe(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(k));
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> row(k);
      for (auto& v : row) v = d(rng);
      std::sort(row.begin(), row.end());
      for (std::size_t t = 0; t < k; ++t)
        q(i, t) = qe(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(t)) = row[t];
    }
    const Eigen::MatrixXd want = w1_matrix_quantiles(qe, 1);
    const auto got = stats::w1_matrix_rows(q, 3);
    REQUIRE(got.shape(0) == n);
    REQUIRE(got.shape(1) == n);
    std::vector<double> out(n * n, -1.0);
    stats::w1_matrix_rows(q.data(), n, k, out.data(), 1);
    std::vector<float> tri(n * (n - 1) / 2, -1.0f);
    stats::w1_condensed_rows<float>(q.data(), n, k, tri.data(), 2);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const double w = want(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
        CHECK(got(i, j) == w);
        CHECK(out[i * n + j] == w);
        if (i < j) CHECK(tri[condensed_index(n, i, j)] == static_cast<float>(w));
      }
  }
  // Errors come before anything is written.
  std::vector<double> q = {1, 2, std::numeric_limits<double>::infinity(), 4};
  std::vector<double> out(4, -1.0);
  CHECK_THROWS_AS(stats::w1_matrix_rows(q.data(), 2, 2, out.data()), failslow::domain_error);
  CHECK(out == std::vector<double>(4, -1.0));
  CHECK_THROWS_AS(stats::w1_matrix_rows(q.data(), 0, 2, out.data()), failslow::invalid_argument);
  CHECK_THROWS_AS(stats::w1_condensed_rows(q.data(), 2, 0, out.data()), failslow::invalid_argument);
  CHECK_THROWS_AS(stats::w1_matrix_rows(failslow::dense_array<double, 2>()), failslow::invalid_argument);
}

TEST_CASE("summaries: reconstruction keeps W1 to the empirical distribution small") {
  // Realistic kernel durations: two clusters; the reconstructed mixture's W1 to the raw sample,
  // relative to the mean, is what bench/README.md tabulates.
  std::mt19937_64 rng(17);
  std::lognormal_distribution<double> fast(std::log(20e3), 0.03), slow(std::log(26e3), 0.05);
  std::vector<double> x;
  for (int i = 0; i < 20000; ++i) x.push_back(i % 5 ? fast(rng) : slow(rng));
  const auto s = summarize_clusters(x);
  const auto m = lognormal_mixture::from_summary(s, true);
  auto sorted = x;
  std::sort(sorted.begin(), sorted.end());
  const auto qe = quantile_vector_sorted(sorted.data(), sorted.size(), 1024);
  const auto qm = quantile_vector(m, 1024);
  const double rel = wasserstein1_quantiles(qe, qm) / moments(x).mean();
  INFO("relative W1 " << rel);
  CHECK(rel < 0.01);
  std::vector<distribution_summary> summaries = {s, s};
  const auto d = w1_matrix_summaries(summaries, 128, true, 2);
  CHECK(d(0, 1) == 0.0);
}

TEST_CASE("quantile grid: z_k are the normal quantiles of the midpoints, symmetric") {
  for (std::size_t k : {1u, 2u, 7u, 256u, 1024u}) {
    const quantile_grid g(k);
    REQUIRE(g.size() == k);
    for (std::size_t i = 0; i < k; ++i) {
      CHECK(g.u()[i] == Approx((static_cast<double>(i) + 0.5) / static_cast<double>(k)).epsilon(1e-15));
      CHECK(g.z()[i] == -g.z()[k - 1 - i]);
      CHECK(stats::detail::normal_cdf(g.z()[i]) == Approx(g.u()[i]).epsilon(1e-14));
    }
  }
  CHECK_THROWS_AS(quantile_grid(0), invalid_argument);
}

TEST_CASE("closed-form W1 of two lognormals matches the scipy quadrature") {
  const auto fx = failslow_test::load_fixture("stats/lognormal.json");
  int singles = 0;
  for (const auto& pair : fx["mixture_pairs"]) {
    const auto a = mixture_from_json(pair["a"]), b = mixture_from_json(pair["b"]);
    if (a.components().size() != 1 || b.components().size() != 1 || a.truncated() || b.truncated()) continue;
    ++singles;
    INFO("pair " << pair["name"].get<std::string>());
    const double expected = pair["w1"].get<double>();
    CHECK(close(wasserstein1(a.components()[0], b.components()[0]), expected, 1e-12, 0));
    CHECK(close(wasserstein1(b.components()[0], a.components()[0]), expected, 1e-12, 0));
  }
  CHECK(singles == 3);
  // Random pairs against the Gauss-Kronrod integral (itself checked against scipy above).
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<double> u01(0, 1);
  for (int t = 0; t < 200; ++t) {
    lognormal_component a, b;
    a.mu = 9 + 3 * u01(rng);
    a.sigma = 0.01 + 0.8 * u01(rng);
    b.mu = a.mu + 0.3 * (u01(rng) - 0.5);
    b.sigma = t % 5 == 0 ? a.sigma : 0.01 + 0.8 * u01(rng);
    const double exact = wasserstein1(lognormal_mixture({a}, false), lognormal_mixture({b}, false));
    INFO("mu " << a.mu << ", " << b.mu << " sigma " << a.sigma << ", " << b.sigma);
    CHECK(wasserstein1(a, b) == Approx(exact).epsilon(1e-8));
  }
  lognormal_component zero;
  zero.point = 0;
  CHECK_THROWS_AS(wasserstein1(zero, zero), domain_error);
}

TEST_CASE("quantile-grid vectors: exact for one lognormal, close to the root-finding quantile otherwise") {
  const quantile_grid grid(256);
  const auto fx = failslow_test::load_fixture("stats/lognormal.json");
  for (const auto& mj : fx["mixtures"]) {
    const auto m = mixture_from_json(mj);
    INFO("mixture " << mj["name"].get<std::string>());
    const auto q = quantile_vector(m, grid);
    // Interpolation error in ln Q: second order in the node spacing; larger only where F is
    // nearly flat (between clusters), where a quantile barely carries mass.
    std::size_t loose = 0;
    for (std::size_t i = 0; i < grid.size(); ++i) {
      const double exact = m.quantile(grid.u()[i]);
      const double rel = std::abs(q[i] - exact) / exact;
      CHECK(rel < 0.01);
      if (rel > 1e-4) ++loose;
    }
    CHECK(loose <= 6);
  }
  lognormal_component c;
  c.mu = std::log(20e3);
  c.sigma = 0.07;
  const auto q = quantile_vector(lognormal_mixture({c}, false), grid);
  for (std::size_t i = 0; i < grid.size(); ++i) CHECK(q[i] == Approx(c.quantile(grid.u()[i])).epsilon(1e-13));
  lognormal_component p;
  p.point = 5;
  const auto qp = quantile_vector(lognormal_mixture({p}, false), grid);
  CHECK(std::all_of(qp.begin(), qp.end(), [](double v) { return v == 5; }));
}

TEST_CASE("W1 of quantile-grid vectors is within 0.1 % of the mean of the exact integral") {
  // The documented accuracy (quantile_grid.hpp): the scipy pairs, then random mixtures of 1-4
  // clusters, truncated or not, with point masses, against the Gauss-Kronrod integral.
  const quantile_grid grid(256);
  auto mean_of = [&](const std::vector<double>& q) {
    return std::accumulate(q.begin(), q.end(), 0.0) / static_cast<double>(q.size());
  };
  const auto fx = failslow_test::load_fixture("stats/lognormal.json");
  auto exact_vector = [&](const lognormal_mixture& m) {  // root-finding quantiles, same grid
    std::vector<double> q;
    for (double u : grid.u()) q.push_back(m.quantile(u));
    return q;
  };
  for (const auto& pair : fx["mixture_pairs"]) {
    const auto a = mixture_from_json(pair["a"]), b = mixture_from_json(pair["b"]);
    const auto qa = quantile_vector(a, grid), qb = quantile_vector(b, grid);
    INFO("pair " << pair["name"].get<std::string>());
    const double w1_grid = wasserstein1_quantiles(qa, qb);
    // The interpolation against root finding on the same grid.
    CHECK(std::abs(w1_grid - wasserstein1_quantiles(exact_vector(a), exact_vector(b))) <= 1e-4 * mean_of(qa));
    // Against the exact integral, where no untruncated cluster has a heavy tail (sigma > 0.6:
    // the midpoint rule of the quantile form then misses the mass beyond u_0 and u_K-1, the
    // documented limit of the form, not of the grid).
    bool heavy = false;
    for (const auto* m : {&a, &b})
      for (const auto& c : m->components()) heavy = heavy || (!m->truncated() && c.sigma > 0.6);
    if (!heavy) CHECK(std::abs(w1_grid - pair["w1"].get<double>()) <= 1e-3 * mean_of(qa));
  }
  std::mt19937_64 rng(43);
  std::uniform_real_distribution<double> u01(0, 1);
  double worst = 0;
  for (int t = 0; t < 200; ++t) {
    const int clusters = 1 + t % 4;
    const bool truncated = (t / 4) % 2 == 1;
    std::vector<lognormal_component> ca, cb;
    double mu = std::log(5e3) + 4 * u01(rng);
    for (int c = 0; c < clusters; ++c) {
      lognormal_component k;
      k.weight = 0.05 + u01(rng);
      k.sigma = t % 9 == 0 && c == 0 ? 0.0 : 0.01 + 0.6 * u01(rng) * u01(rng);
      k.mu = mu;
      k.point = std::exp(mu);
      k.lo = k.sigma == 0 ? k.point : std::exp(mu - k.sigma * (1.5 + 2.5 * u01(rng)));
      k.hi = k.sigma == 0 ? k.point : std::exp(mu + k.sigma * (1.5 + 2.5 * u01(rng)));
      ca.push_back(k);
      mu += 0.4 + u01(rng);
      const double slow = 1 + 0.1 * u01(rng);  // the other side: each cluster slowed a little
      k.mu += std::log(slow);
      k.point *= slow;
      k.lo *= slow;
      k.hi *= slow;
      cb.push_back(k);
    }
    const lognormal_mixture a(ca, truncated), b(cb, truncated);
    const auto qa = quantile_vector(a, grid), qb = quantile_vector(b, grid);
    const double rel = std::abs(wasserstein1_quantiles(qa, qb) - wasserstein1(a, b)) / mean_of(qa);
    worst = std::max(worst, rel);
    INFO("trial " << t << ": " << clusters << " clusters, truncated " << truncated);
    CHECK(rel <= 1e-3);
  }
  WARN("worst |W1_grid - W1| / mean over 200 random pairs: " << worst);
}

namespace {
// quantile_vector as it was first written: every component's nodes merged with std::merge, F at
// each node the sum over every component. The shortcuts of quantile_grid.hpp (appending nodes
// of ascending components, skipping the components wholly below or above a node) must give
// these bits.
std::vector<double> quantile_vector_every_term(const lognormal_mixture& m, const quantile_grid& grid) {
  const auto& c0 = m.components().front();
  if (m.components().size() == 1 && (c0.is_point_mass() || !m.truncated()))
    return quantile_vector(m, grid);  // the closed forms, not the node sums
  std::vector<stats::detail::component_cdf> parts;
  for (const auto& c : m.components()) parts.emplace_back(c, m.truncated());
  std::vector<stats::detail::quantile_node> nodes, own, merged;
  for (std::size_t c = 0; c < parts.size(); ++c) {
    own.resize(parts[c].nodes(grid, c, own));
    merged.resize(nodes.size() + own.size());
    std::merge(nodes.begin(), nodes.end(), own.begin(), own.end(), merged.begin(),
               [](const stats::detail::quantile_node& a, const stats::detail::quantile_node& b) { return a.t < b.t; });
    nodes.swap(merged);
  }
  double running = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const bool strict = i + 1 < nodes.size() && nodes[i + 1].t == nodes[i].t;
    double f = 0;
    for (std::size_t c = 0; c < parts.size(); ++c)
      f += parts[c].cdf(nodes[i].t, strict, c == nodes[i].owner ? nodes[i].own_phi : -1.0);
    nodes[i].f = running = std::max(running, std::min(1.0, f));
  }
  std::vector<double> out(grid.size());
  std::size_t j = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    while (j < nodes.size() && nodes[j].f < grid.u()[i]) ++j;
    out[i] = j == 0              ? std::exp(nodes.front().t)
             : j == nodes.size() ? std::exp(nodes.back().t)
                                 : stats::detail::interpolate_t(nodes[j - 1], nodes[j], grid.u()[i]);
  }
  return out;
}
}  // namespace

TEST_CASE("quantile-grid vectors: the shortcuts give the bits of summing every component at every node") {
  // Ascending disjoint clusters, log-uniform pieces sharing their ends (knots), point masses
  // (values, repeated values), overlapping and descending clusters (the plain sum), untruncated.
  std::mt19937_64 rng(61);
  std::uniform_real_distribution<double> u01(0, 1);
  const quantile_grid g32(32), g256(256);
  int ordered_cases = 0;
  for (int t = 0; t < 400; ++t) {
    const int kind = t % 5, parts = 1 + static_cast<int>(u01(rng) * 6);
    std::vector<lognormal_component> comps;
    double x = 1e3 * (1 + 100 * u01(rng));
    for (int c = 0; c < parts; ++c) {
      const double next = x * (1 + (kind == 1 ? 0.3 : 2.0) * u01(rng));
      const double w = kind == 0 && c == 1 ? 0.0 : 0.02 + u01(rng);
      if (kind == 1) {  // knots: adjacent log-uniform pieces
        comps.push_back(log_uniform_piece(x, next, w));
      } else if (kind == 2) {  // values: point masses, some repeated
        comps.push_back(log_uniform_piece(x, x, w));
      } else {  // clusters, truncated to their ranges
        lognormal_component k;
        k.weight = w;
        k.mu = std::log(std::sqrt(x * next));
        k.sigma = 0.01 + 0.5 * u01(rng);
        k.point = std::exp(k.mu);
        k.lo = kind == 3 ? x / 3 : x;  // kind 3: overlapping neighbours
        k.hi = next;
        comps.push_back(k);
      }
      if (!(kind == 2 && u01(rng) < 0.3)) x = next;
    }
    if (t % 10 == 4) std::reverse(comps.begin(), comps.end());  // descending: the plain sum
    for (bool truncated : {true, false}) {
      if (!truncated && kind == 1) continue;  // pieces mean nothing untruncated
      const lognormal_mixture m(comps, truncated);
      ordered_cases += truncated && kind != 3 && t % 10 != 4;
      CAPTURE(t, kind, parts, truncated);
      for (const auto* g : {&g32, &g256}) {
        const auto fast = quantile_vector(m, *g), plain = quantile_vector_every_term(m, *g);
        std::size_t differ = 0;  // entries whose bits differ
        for (std::size_t i = 0; i < fast.size(); ++i) differ += std::memcmp(&fast[i], &plain[i], sizeof(double)) != 0;
        CHECK(differ == 0);
      }
    }
  }
  CHECK(ordered_cases > 100);
}
