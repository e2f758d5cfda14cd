// Cross-rank robust scores (failslow/detect/robust_score.hpp).
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/detect/robust_score.hpp>
#include <failslow/stats/descriptive.hpp>
#include <limits>
#include <random>
#include <vector>

using namespace failslow::detect;

TEST_CASE("robust z: modified z-scores of stats, flags on the chosen side", "[robust_score]") {
  std::vector<double> v = {10.0, 10.2, 9.9, 10.1, 9.8, 10.0, 10.3, 14.0, 6.0, 10.1};
  const auto r = robust_z_outliers(v);
  CHECK(r.z == failslow::stats::modified_z_scores(v));
  CHECK(r.median == failslow::stats::median(v));
  CHECK(r.mad == failslow::stats::mad(v));
  // by hand: median 10.05, MAD 0.15 -> z(14) = 0.6745 * 3.95 / 0.15
  CHECK(r.z[7] == Approx(0.6745 * 3.95 / 0.15));
  CHECK(r.flagged == std::vector<std::size_t>{7});
  CHECK(robust_z_outliers(v, 3.5, chart_side::both).flagged == std::vector<std::size_t>{7, 8});
  CHECK(robust_z_outliers(v, 3.5, chart_side::lower).flagged == std::vector<std::size_t>{8});
  CHECK(robust_z_outliers(v, 100.0, chart_side::both).flagged.empty());
  // integer durations (e.g. ns counters): median and MAD are not rounded
  const std::vector<int> ints = {1, 2, 4, 7};
  const auto ri = robust_z_outliers(ints);
  CHECK(ri.median == 3.0);
  CHECK(ri.mad == 1.5);
  const std::vector<std::vector<int>> int_samples = {{1, 2}, {3, 4}};
  CHECK(relative_performance_scores_from_samples(int_samples).scores[1] == Approx(1.5 / 3.5));
}

TEST_CASE("robust z: a straggler among thousands of ranks, with up to half of them slow", "[robust_score]") {
  std::mt19937_64 rng(6);
  std::lognormal_distribution<double> noise(std::log(50.0), 0.02);
  std::vector<double> ranks(4096);
  for (double& x : ranks) x = noise(rng);
  ranks[1234] *= 1.3;
  auto r = robust_z_outliers(ranks);
  CHECK(r.flagged == std::vector<std::size_t>{1234});
  // 40 % of the ranks 30 % slower: the median and MAD still describe the healthy ones...
  std::vector<double> half = ranks;
  for (std::size_t i = 0; i < half.size() * 2 / 5; ++i) half[i] *= 1.3;
  r = robust_z_outliers(half);
  CHECK(r.flagged.size() >= half.size() * 2 / 5 - 5);
  // ... which the mean and sd do not: a plain z-score with the same threshold finds none.
  const auto m = failslow::stats::moments(half);
  int plain = 0;
  for (double x : half) plain += (x - m.mean()) / m.stddev() > 3.5 ? 1 : 0;
  CHECK(plain == 0);
}

TEST_CASE("column_cv: the phase where the ranks disagree", "[robust_score]") {
  Eigen::MatrixXd m(4, 3);
  m << 10, 5, 1.0,  //
      10, 5, 1.0,   //
      10, 9, 1.1,   //
      10, 5, 0.9;
  const auto cv = column_cv(m);
  REQUIRE(cv.size() == 3);
  CHECK(cv[0] == 0.0);
  CHECK(cv[1] == Approx(failslow::stats::coefficient_of_variation(std::vector<double>{5, 5, 9, 5})));
  CHECK(cv[1] > cv[2]);
  // The library's own table type gives the same figures (the header does not need Eigen).
  failslow::dense_array<double, 2> t({4, 3});
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 3; ++j) t(i, j) = m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
  CHECK(column_cv(t) == cv);
  Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(3, 1);
  CHECK_THROWS_AS(column_cv(zero), failslow::domain_error);
  CHECK_THROWS_AS(column_cv(failslow::dense_array<double, 2>({0, 3})), failslow::invalid_argument);
}

TEST_CASE("relative performance score (NVIDIA straggler detector)", "[robust_score]") {
  const std::vector<double> medians = {10.0, 10.5, 20.0, 12.0, 14.0};
  const auto r = relative_performance_scores(medians);
  CHECK(r.reference == 10.0);
  CHECK(r.reference_rank == 0);
  CHECK(r.scores == std::vector<double>{1.0, 10.0 / 10.5, 0.5, 10.0 / 12.0, 10.0 / 14.0});
  CHECK(r.stragglers == std::vector<std::size_t>{2, 4});  // 0.5 and 0.714 < 0.75
  CHECK(relative_performance_scores(medians, 0.9).stragglers == std::vector<std::size_t>{2, 3, 4});
  const std::vector<std::vector<double>> samples = {{10, 11, 9}, {20, 21, 19, 22}, {10, 10}};
  const auto s = relative_performance_scores_from_samples(samples);
  CHECK(s.reference == 10.0);
  CHECK(s.scores[1] == Approx(10.0 / 20.5));
  CHECK(s.stragglers == std::vector<std::size_t>{1});
  const auto ind = individual_performance_scores(std::vector<double>{12.0, 10.0}, std::vector<double>{8.0, 10.0});
  CHECK(ind.scores == std::vector<double>{8.0 / 12.0, 1.0});
  CHECK(ind.stragglers == std::vector<std::size_t>{0});
  CHECK_THROWS_AS(relative_performance_scores(std::vector<double>{}), failslow::invalid_argument);
  CHECK_THROWS_AS(relative_performance_scores(std::vector<double>{1.0, 0.0}), failslow::domain_error);
  CHECK_THROWS_AS(relative_performance_scores(std::vector<double>{1.0, std::nan("")}), failslow::domain_error);
  CHECK_THROWS_AS(individual_performance_scores(std::vector<double>{1.0}, std::vector<double>{1.0, 2.0}),
                  failslow::invalid_argument);
}

TEST_CASE("robust z vs the relative score: a 20 % straggler among noisy ranks", "[robust_score]") {
  // The relative score only sees ratios to the fastest rank: with 5 % rank-to-rank noise, a 20 %
  // slower rank stays above 0.75, while the modified z-score flags it.
  std::mt19937_64 rng(10);
  std::normal_distribution<double> noise(100.0, 1.0);
  std::vector<double> med(512);
  for (double& x : med) x = noise(rng);
  med[77] = 120.0;
  CHECK(relative_performance_scores(med).stragglers.empty());
  CHECK(robust_z_outliers(med).flagged == std::vector<std::size_t>{77});
}
