// KAT's inter-worker Mahalanobis detector (failslow/detect/mahalanobis.hpp).
#include <Eigen/Dense>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <failslow/detect/mahalanobis.hpp>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "support/detect_reference.hpp"

using namespace failslow::detect;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

MatrixXd to_matrix(const nlohmann::json& rows) {
  MatrixXd m(static_cast<Index>(rows.size()), static_cast<Index>(rows[0].size()));
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) m(i, j) = rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  return m;
}

MatrixXd gaussian(Index n, Index d, std::mt19937_64& rng) {
  std::normal_distribution<double> g;
  MatrixXd m(n, d);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < d; ++j) m(i, j) = g(rng);
  return m;
}

// A correlated population: standard normal rows times a random mixing matrix, plus offsets.
MatrixXd population(Index n, Index d, std::mt19937_64& rng, MatrixXd* mixing = nullptr) {
  const MatrixXd a = gaussian(d, d, rng) + 2.0 * MatrixXd::Identity(d, d);
  if (mixing) *mixing = a;
  MatrixXd x = gaussian(n, d, rng) * a;
  for (Index j = 0; j < d; ++j) x.col(j).array() += 100.0 * static_cast<double>(j + 1);
  return x;
}

mahalanobis_options with(covariance_estimator e) {
  mahalanobis_options o;
  o.estimator = e;
  return o;
}

}  // namespace

TEST_CASE("mahalanobis: chi-square quantiles, survival, thresholds and false-alarm rates vs scipy", "[mahalanobis]") {
  const auto j = failslow_test::detect_fixture("chi2.json");
  for (const auto& e : j["quantiles"]) {
    INFO("dof " << e["dof"] << " q " << e["q"]);
    CHECK(chi2_quantile(e["dof"].get<double>(), e["q"].get<double>()) == Approx(e["x"].get<double>()).epsilon(1e-12));
  }
  for (const auto& e : j["sf"]) {
    INFO("dof " << e["dof"] << " x " << e["x"]);
    CHECK(chi2_sf(e["dof"].get<double>(), e["x"].get<double>()) ==
          Approx(e["sf"].get<double>()).epsilon(1e-11).margin(1e-300));
  }
  for (const auto& e : j["thresholds"]) {
    const auto dof = e["dof"].get<Index>(), n = e["n"].get<Index>();
    CHECK(mahalanobis_threshold(dof, n) == Approx(e["adaptive"].get<double>()).epsilon(1e-12));
    CHECK(mahalanobis_threshold(dof, n, 0.99, outlier_threshold::chi2) ==
          Approx(e["chi2"].get<double>()).epsilon(1e-12));
  }
  for (const auto& e : j["false_alarm_rates"]) {
    const auto n = e["n"].get<Index>(), d = e["d"].get<Index>();
    CHECK(in_sample_false_alarm_rate(n, d, e["threshold"].get<double>()) ==
          Approx(e["rate"].get<double>()).epsilon(1e-9).margin(1e-300));
  }
  CHECK_THROWS_AS(chi2_quantile(0.0, 0.5), failslow::invalid_argument);
  CHECK_THROWS_AS(chi2_quantile(3.0, 1.0), failslow::invalid_argument);
}

TEST_CASE("mahalanobis: distances equal scipy's (sample covariance) and the Ledoit-Wolf reference", "[mahalanobis]") {
  const auto j = failslow_test::detect_fixture("mahalanobis.json");
  for (const auto& c : j["cases"]) {
    const MatrixXd x = to_matrix(c["x"]);
    INFO("case " << c["name"].get<std::string>());
    const auto features = c["features"].get<std::vector<Index>>();
    if (c.contains("sample_d2")) {
      const auto r = detect_outlier_workers(x, with(covariance_estimator::sample));
      CHECK(r.model.features == features);
      const auto ref = failslow_test::to_doubles(c["sample_d2"]);
      for (Index i = 0; i < x.rows(); ++i) CHECK(r.d2(i) == Approx(ref[static_cast<std::size_t>(i)]).epsilon(1e-8));
    }
    const auto r = detect_outlier_workers(x, with(covariance_estimator::ledoit_wolf));
    CHECK(r.model.features == features);
    CHECK(r.model.dof() == static_cast<Index>(features.size()));
    CHECK(r.model.shrinkage == Approx(c["lw_shrinkage"].get<double>()).epsilon(1e-9));
    CHECK(r.threshold == Approx(c["threshold_adaptive"].get<double>()).epsilon(1e-12));
    const auto ref = failslow_test::to_doubles(c["lw_d2"]);
    const auto pv = failslow_test::to_doubles(c["lw_p_values"]);
    for (Index i = 0; i < x.rows(); ++i) {
      CHECK(r.d2(i) == Approx(ref[static_cast<std::size_t>(i)]).epsilon(1e-8));
      CHECK(r.p_value(i) == Approx(pv[static_cast<std::size_t>(i)]).epsilon(1e-7).margin(1e-300));
      CHECK((r.distance(i) > r.threshold) == (std::find(r.outliers.begin(), r.outliers.end(), i) != r.outliers.end()));
    }
  }
}

TEST_CASE("mahalanobis: the planted outliers of the fixture population are found", "[mahalanobis]") {
  const auto j = failslow_test::detect_fixture("mahalanobis.json");
  const MatrixXd x = to_matrix(j["cases"][0]["x"]);  // 40 x 5 with workers 3 and 17 planted
  for (auto e : {covariance_estimator::sample, covariance_estimator::ledoit_wolf}) {
    const auto r = detect_outlier_workers(x, with(e));
    INFO("estimator " << static_cast<int>(e));
    CHECK(r.outliers == std::vector<Index>{3, 17});
  }
  // MCD finds them too; on 40 workers its false-alarm rate is several percent (documented).
  const auto r = detect_outlier_workers(x, with(covariance_estimator::mcd));
  CHECK(std::binary_search(r.outliers.begin(), r.outliers.end(), Index{3}));
  CHECK(std::binary_search(r.outliers.begin(), r.outliers.end(), Index{17}));
  CHECK(r.outliers.size() <= 6);
}

TEST_CASE("mahalanobis: planted outlier workers found at d = 12, for every estimator", "[mahalanobis]") {
  std::mt19937_64 rng(2024);
  int found = 0, planted = 0, false_flags = 0, mcd_false_flags = 0;
  long workers = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const Index n = 100 + 40 * trial, d = 12;
    MatrixXd a;
    MatrixXd x = population(n, d, rng, &a);
    // outliers: a 7-sigma move along a random direction of the whitened space
    std::vector<Index> bad;
    std::uniform_int_distribution<Index> pick(0, n - 1);
    while (bad.size() < 4) {
      const Index i = pick(rng);
      if (std::find(bad.begin(), bad.end(), i) == bad.end()) bad.push_back(i);
    }
    std::sort(bad.begin(), bad.end());
    for (Index i : bad) {
      VectorXd u = gaussian(1, d, rng).row(0).transpose();
      u.normalize();
      x.row(i) += 7.0 * std::sqrt(static_cast<double>(d)) / 2.0 * (u.transpose() * a);
    }
    for (auto e : {covariance_estimator::sample, covariance_estimator::ledoit_wolf, covariance_estimator::mcd}) {
      const auto r = detect_outlier_workers(x, with(e));
      for (Index i : bad) found += std::binary_search(r.outliers.begin(), r.outliers.end(), i) ? 1 : 0;
      planted += 4;
      for (Index i : r.outliers)
        (e == covariance_estimator::mcd ? mcd_false_flags : false_flags) +=
            std::binary_search(bad.begin(), bad.end(), i) ? 0 : 1;
    }
    workers += n;
  }
  INFO(found << " of " << planted << " planted outliers found, " << false_flags << " false flags, MCD "
             << mcd_false_flags << " of " << workers << " workers");
  CHECK(found >= planted - 2);
  CHECK(false_flags <= static_cast<int>(0.01 * 2 * static_cast<double>(workers)));  // below 1 - q
  CHECK(mcd_false_flags <= static_cast<int>(0.03 * static_cast<double>(workers)));  // documented: 0.7-5 %
}

TEST_CASE("mahalanobis: MCD resists masking by a cluster of outliers, mean-based estimators do not",
          "[mahalanobis][mcd]") {
  std::mt19937_64 rng(7);
  const Index n = 400, d = 6;
  MatrixXd x = population(n, d, rng);
  // A fifth of the workers slowed together (a failing rack): a tight cluster far away; with the
  // maximal-breakdown support, 40 % of them.
  std::normal_distribution<double> g;
  for (const Index bad : {n / 5, 2 * n / 5}) {
    for (Index i = 0; i < bad; ++i)
      for (Index j = 0; j < d; ++j) x(i, j) = 100.0 * static_cast<double>(j + 1) + 25.0 + 0.3 * g(rng);
    mahalanobis_options o = with(covariance_estimator::mcd);
    if (bad > n / 4) o.mcd_support = 0.0;
    const auto mcd = detect_outlier_workers(x, o);
    const auto lw = detect_outlier_workers(x, with(covariance_estimator::ledoit_wolf));
    Index mcd_hits = 0, lw_hits = 0;
    for (Index i = 0; i < bad; ++i) {
      mcd_hits += std::binary_search(mcd.outliers.begin(), mcd.outliers.end(), i) ? 1 : 0;
      lw_hits += std::binary_search(lw.outliers.begin(), lw.outliers.end(), i) ? 1 : 0;
    }
    INFO(bad << " clustered outliers: MCD finds " << mcd_hits << ", Ledoit-Wolf " << lw_hits);
    CHECK(mcd_hits == bad);
    CHECK(lw_hits < bad / 2);  // masked: the cluster pulls the mean and inflates the covariance
    Index mcd_false = 0;
    for (Index i : mcd.outliers) mcd_false += i >= bad ? 1 : 0;
    CHECK(mcd_false <= 12);
    // the support excludes the cluster
    for (Index i = 0; i < bad; ++i) CHECK(mcd.model.support[static_cast<std::size_t>(i)] == 0);
  }
}

TEST_CASE("mahalanobis: FAST-MCD finds the exhaustive minimum-determinant subset on small data", "[mahalanobis][mcd]") {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 6; ++trial) {
    const Index n = 14, d = 2, h = (n + d + 1) / 2;  // 8 of 14: 3003 subsets
    MatrixXd x = gaussian(n, d, rng);
    x.row(0) *= 6.0;
    x.row(5).array() += 4.0;
    // exhaustive search over all h-subsets (the determinant is invariant to the standardisation)
    std::vector<int> mask(static_cast<std::size_t>(n), 0);
    std::fill(mask.begin(), mask.begin() + h, 1);
    std::sort(mask.begin(), mask.end());
    double best = std::numeric_limits<double>::infinity();
    std::vector<int> best_mask;
    do {
      MatrixXd sub(h, d);
      Index k = 0;
      for (Index i = 0; i < n; ++i)
        if (mask[static_cast<std::size_t>(i)]) sub.row(k++) = x.row(i);
      const MatrixXd c = sub.rowwise() - sub.colwise().mean();
      const double det = (c.transpose() * c).determinant();
      if (det < best) {
        best = det;
        best_mask = mask;
      }
    } while (std::next_permutation(mask.begin(), mask.end()));
    mahalanobis_options o = with(covariance_estimator::mcd);
    o.mcd_reweight = false;
    o.mcd_support = 0.0;  // h = (n + d + 1) / 2
    o.mcd_starts = 200;
    const auto m = fit_mahalanobis(x, o);
    for (Index i = 0; i < n; ++i)
      CHECK(static_cast<int>(m.support[static_cast<std::size_t>(i)]) == best_mask[static_cast<std::size_t>(i)]);
  }
}

TEST_CASE("mahalanobis: clean populations are quiet at the stated (exact) rate", "[mahalanobis]") {
  // Sample covariance: the per-worker rate is exactly in_sample_false_alarm_rate (checked against
  // scipy above); count over many populations and compare with a binomial tolerance.
  struct config {
    Index n, d;
    outlier_threshold rule;
    int populations;
  };
  for (const config c : {config{50, 4, outlier_threshold::chi2, 3000}, config{200, 12, outlier_threshold::chi2, 400},
                         config{50, 4, outlier_threshold::adaptive, 3000}}) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(c.n * 100 + c.d + static_cast<int>(c.rule)));
    mahalanobis_options o = with(covariance_estimator::sample);
    o.threshold = c.rule;
    long flagged = 0, lw_flagged = 0, total = 0;
    for (int p = 0; p < c.populations; ++p) {
      const MatrixXd x = population(c.n, c.d, rng);
      flagged += static_cast<long>(detect_outlier_workers(x, o).outliers.size());
      mahalanobis_options l = o;
      l.estimator = covariance_estimator::ledoit_wolf;
      lw_flagged += static_cast<long>(detect_outlier_workers(x, l).outliers.size());
      total += c.n;
    }
    const double rate = in_sample_false_alarm_rate(c.n, c.d, mahalanobis_threshold(c.d, c.n, 0.99, c.rule));
    const double expected = rate * static_cast<double>(total);
    INFO("n " << c.n << " d " << c.d << " rule " << static_cast<int>(c.rule) << ": " << flagged << " flagged of "
              << total << ", expected " << expected << "; Ledoit-Wolf " << lw_flagged);
    CHECK(std::abs(static_cast<double>(flagged) - expected) < 5.0 * std::sqrt(expected) + 2.0);
    CHECK(rate < 0.01);                                                                   // below 1 - q
    CHECK(static_cast<double>(lw_flagged) < expected + 5.0 * std::sqrt(expected) + 2.0);  // shrinkage: fewer
  }
}

TEST_CASE("mahalanobis: N <= d, collinear and constant features, and units", "[mahalanobis]") {
  std::mt19937_64 rng(5);
  // N <= d: Ledoit-Wolf stays well conditioned; the sample covariance is singular and floored.
  const MatrixXd wide = gaussian(8, 12, rng);
  for (auto e : {covariance_estimator::sample, covariance_estimator::ledoit_wolf, covariance_estimator::mcd}) {
    const auto r = detect_outlier_workers(wide, with(e));
    INFO("estimator " << static_cast<int>(e));
    CHECK(r.d2.allFinite());
    CHECK(r.p_value.allFinite());
    CHECK(r.model.dof() == 12);
    if (e == covariance_estimator::sample) CHECK(r.model.floored_eigenvalues >= 5);
    if (e == covariance_estimator::ledoit_wolf) {
      CHECK(r.model.floored_eigenvalues == 0);
      CHECK(r.model.shrinkage > 0.3);
    }
  }
  // A feature that is a copy of another (collinear): finite distances; an outlier still stands out.
  MatrixXd col = population(60, 4, rng);
  col.col(3) = 2.0 * col.col(1);
  col.row(10) += VectorXd::Constant(4, 40.0).transpose();
  for (auto e : {covariance_estimator::sample, covariance_estimator::ledoit_wolf}) {
    const auto r = detect_outlier_workers(col, with(e));
    CHECK(r.d2.allFinite());
    CHECK(r.outliers == std::vector<Index>{10});
  }
  // Constant features are dropped; dof and threshold follow.
  MatrixXd cst = population(60, 5, rng);
  cst.col(1).setConstant(3.5);
  cst.col(4).setConstant(0.0);
  const auto r = detect_outlier_workers(cst, {});
  CHECK(r.model.constant_features == std::vector<Index>{1, 4});
  CHECK(r.model.features == std::vector<Index>{0, 2, 3});
  CHECK(r.threshold == Approx(mahalanobis_threshold(3, 60)));
  // All constant: nothing to compare, nobody flagged.
  const MatrixXd flat = MatrixXd::Constant(10, 3, 7.0);
  const auto none = detect_outlier_workers(flat, {});
  CHECK(none.model.dof() == 0);
  CHECK(none.d2.isZero());
  CHECK(none.outliers.empty());
  CHECK(none.p_value.isOnes());
  // Standardised: distances do not depend on units and offsets of the features.
  const MatrixXd x = population(80, 5, rng);
  MatrixXd scaled = x;
  const double units[] = {1e-6, 1.0, 1e3, 1e9, 0.5};
  for (Index j = 0; j < 5; ++j)
    scaled.col(j) = scaled.col(j) * units[j] + VectorXd::Constant(80, 1e3 * static_cast<double>(j));
  for (auto e : {covariance_estimator::sample, covariance_estimator::ledoit_wolf, covariance_estimator::mcd}) {
    const auto a = detect_outlier_workers(x, with(e)), b = detect_outlier_workers(scaled, with(e));
    for (Index i = 0; i < 80; ++i) CHECK(b.d2(i) == Approx(a.d2(i)).epsilon(1e-7));
  }
  // The sample-covariance distance is affine invariant.
  const MatrixXd t = gaussian(5, 5, rng) + 3.0 * MatrixXd::Identity(5, 5);
  const auto a = detect_outlier_workers(x, with(covariance_estimator::sample));
  const auto b = detect_outlier_workers(MatrixXd(x * t), with(covariance_estimator::sample));
  for (Index i = 0; i < 80; ++i) CHECK(b.d2(i) == Approx(a.d2(i)).epsilon(1e-7));
}

TEST_CASE("mahalanobis: a fitted model scores new workers, float input, errors", "[mahalanobis][errors]") {
  std::mt19937_64 rng(13);
  const MatrixXd ref = population(300, 6, rng);
  const auto model = fit_mahalanobis(ref, {});
  MatrixXd fresh = population(1, 6, rng);
  fresh.row(0) = ref.colwise().mean();
  CHECK(model.squared_distances(fresh)(0) < 1e-6);
  const Eigen::MatrixXf xf = ref.cast<float>();
  const auto rf = detect_outlier_workers(xf, {});
  const auto rd = detect_outlier_workers(ref, {});
  for (Index i = 0; i < 300; ++i) CHECK(rf.d2(i) == Approx(rd.d2(i)).epsilon(1e-4));

  CHECK_THROWS_AS(detect_outlier_workers(MatrixXd(1, 3), {}), failslow::invalid_argument);
  CHECK_THROWS_AS(detect_outlier_workers(MatrixXd(5, 0), {}), failslow::invalid_argument);
  MatrixXd nan = ref;
  nan(4, 2) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(detect_outlier_workers(nan, {}), failslow::domain_error);
  mahalanobis_options bad;
  bad.quantile = 1.0;
  CHECK_THROWS_AS(detect_outlier_workers(ref, bad), failslow::invalid_argument);
  bad = {};
  bad.mcd_support = 1.5;
  CHECK_THROWS_AS(detect_outlier_workers(ref, bad), failslow::invalid_argument);
  CHECK_THROWS_AS(in_sample_false_alarm_rate(5, 4, 3.0), failslow::invalid_argument);
}

// The core without Eigen (detect/mahalanobis_rows.hpp) and its decompositions, against Eigen's.
#include <failslow/detect/detail/row_matrix.hpp>
#include <failslow/detect/detail/symmetric_eigen.hpp>
#include <failslow/detect/mahalanobis_rows.hpp>

namespace {

failslow::detect::detail::row_matrix<double> to_rows(const MatrixXd& m) {
  failslow::detect::detail::row_matrix<double> r(static_cast<std::size_t>(m.rows()),
                                                 static_cast<std::size_t>(m.cols()));
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) r(static_cast<std::size_t>(i), static_cast<std::size_t>(j)) = m(i, j);
  return r;
}

// Symmetric test matrices: random SPD of several sizes, graded (diagonal 1e-8 .. 1e8 before a
// rotation), singular (rank-deficient), repeated eigenvalues, diagonal, zero, 1 x 1.
std::vector<MatrixXd> symmetric_cases() {
  std::mt19937_64 rng(77);
  std::vector<MatrixXd> out;
  for (Index p : {1, 2, 3, 5, 8, 12, 20, 40}) {
    const MatrixXd g = gaussian(p + 3, p, rng);
    out.push_back(g.transpose() * g);
  }
  for (Index p : {4, 9}) {
    const MatrixXd g = gaussian(2, p, rng);  // rank 2
    out.push_back(g.transpose() * g);
  }
  {
    const MatrixXd q = Eigen::HouseholderQR<MatrixXd>(gaussian(6, 6, rng)).householderQ();
    Eigen::VectorXd ev(6);
    ev << 1e-8, 1e-4, 1.0, 1.0, 1e4, 1e8;
    out.push_back(q * ev.asDiagonal() * q.transpose());
    ev << 2.0, 2.0, 2.0, 5.0, 5.0, 7.0;
    out.push_back(q * ev.asDiagonal() * q.transpose());
  }
  out.push_back(Eigen::Vector3d(3.0, -1.0, 2.0).asDiagonal().toDenseMatrix());
  out.push_back(MatrixXd::Zero(4, 4));
  {
    MatrixXd indefinite = gaussian(7, 7, rng);
    out.push_back(indefinite + indefinite.transpose());
  }
  return out;
}

}  // namespace

TEST_CASE("mahalanobis: the Jacobi eigendecomposition agrees with Eigen's SelfAdjointEigenSolver", "[mahalanobis]") {
  for (const MatrixXd& a : symmetric_cases()) {
    const Index p = a.rows();
    INFO("p " << p << "\n" << a);
    const auto r = failslow::detect::detail::symmetric_eigen(to_rows(a));
    const Eigen::SelfAdjointEigenSolver<MatrixXd> es(a);
    const double norm = std::max(a.norm(), 1e-300);
    MatrixXd v(p, p);
    for (Index i = 0; i < p; ++i)
      for (Index j = 0; j < p; ++j) v(i, j) = r.vectors(static_cast<std::size_t>(i), static_cast<std::size_t>(j));
    for (Index k = 0; k < p; ++k) {
      const double lambda = r.values[static_cast<std::size_t>(k)];
      CHECK(std::fabs(lambda - es.eigenvalues()(k)) <= 1e-13 * norm);
      if (k > 0) CHECK(r.values[static_cast<std::size_t>(k - 1)] <= lambda);
      CHECK((a * v.col(k) - lambda * v.col(k)).norm() <= 1e-13 * norm);  // residual
    }
    CHECK((v.transpose() * v - MatrixXd::Identity(p, p)).norm() <= 1e-13 * static_cast<double>(p));
  }
  // Graded, D A D with A well conditioned and D = diag(2^20, 1, 2^-20): Jacobi keeps the smallest
  // eigenvalue (~1e-12 of the largest) to a relative accuracy (Demmel & Veselic), where a QR-based
  // solver's error is ~1e-16 of the largest. Reference: 1 / the largest eigenvalue of
  // D^-1 A^-1 D^-1, which any backward-stable solver gets to a relative 1e-15.
  MatrixXd a(3, 3);
  a << 1.0, 0.5, 0.2, 0.5, 1.0, 0.3, 0.2, 0.3, 1.0;
  const Eigen::Vector3d dg(std::ldexp(1.0, 20), 1.0, std::ldexp(1.0, -20));
  const MatrixXd graded = dg.asDiagonal() * a * dg.asDiagonal();
  const MatrixXd inv = dg.cwiseInverse().asDiagonal() * a.inverse() * dg.cwiseInverse().asDiagonal();
  const double smallest = 1.0 / Eigen::SelfAdjointEigenSolver<MatrixXd>(inv).eigenvalues()(2);
  const auto r = failslow::detect::detail::symmetric_eigen(to_rows(graded));
  CHECK(r.values[0] == Approx(smallest).epsilon(1e-12));
}

TEST_CASE("mahalanobis: Cholesky agrees with Eigen's LLT and fails where it fails", "[mahalanobis]") {
  for (const MatrixXd& a : symmetric_cases()) {
    failslow::detect::detail::row_matrix<double> l;
    const bool ok = failslow::detect::detail::cholesky(to_rows(a), l);
    const Eigen::LLT<MatrixXd> llt(a);
    INFO("p " << a.rows());
    if (!ok) {
      CHECK(llt.info() != Eigen::Success);
      continue;
    }
    REQUIRE(llt.info() == Eigen::Success);
    const Index p = a.rows();
    MatrixXd lm = MatrixXd::Zero(p, p);
    for (Index i = 0; i < p; ++i)
      for (Index j = 0; j <= i; ++j) lm(i, j) = l(static_cast<std::size_t>(i), static_cast<std::size_t>(j));
    CHECK((lm * lm.transpose() - a).norm() <= 1e-15 * static_cast<double>(p + 1) * a.norm());  // backward error
    // The factor itself is as well determined as a is conditioned: compared where cond < 1e8.
    const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<MatrixXd>(a).eigenvalues();
    if (ev(p - 1) < 1e8 * ev(0)) {
      const MatrixXd el = llt.matrixL();
      CHECK((lm - el).norm() <= 1e-12 * el.norm());
      CHECK(failslow::detect::detail::cholesky_log_det(l) ==
            Approx(std::log(a.determinant())).epsilon(1e-10).margin(1e-10));
    }
  }
}

TEST_CASE("mahalanobis: the row-major core equals the Eigen interface and scipy, and checks its input",
          "[mahalanobis][errors]") {
  const auto j = failslow_test::detect_fixture("mahalanobis.json");
  for (const auto& c : j["cases"]) {
    const MatrixXd x = to_matrix(c["x"]);
    INFO("case " << c["name"].get<std::string>());
    const auto rows = to_rows(x);
    const auto n = static_cast<std::size_t>(x.rows()), d = static_cast<std::size_t>(x.cols());
    const auto fit = fit_mahalanobis_rows(rows.data.data(), n, d, with(covariance_estimator::ledoit_wolf));
    CHECK(fit.columns == d);
    CHECK(fit.shrinkage == Approx(c["lw_shrinkage"].get<double>()).epsilon(1e-9));
    const auto ref = failslow_test::to_doubles(c["lw_d2"]);
    for (std::size_t i = 0; i < n; ++i) CHECK(fit.squared_distance(rows.row(i)) == Approx(ref[i]).epsilon(1e-8));
    const auto model = fit_mahalanobis(x, with(covariance_estimator::ledoit_wolf));
    const VectorXd d2 = model.squared_distances(x);
    for (std::size_t i = 0; i < n; ++i)
      CHECK(fit.squared_distance(rows.row(i)) == Approx(d2(static_cast<Index>(i))).epsilon(1e-13).margin(1e-13));
  }
  const double two[] = {1.0, 2.0};
  CHECK_THROWS_AS(fit_mahalanobis_rows(two, 1, 2), failslow::invalid_argument);
  CHECK_THROWS_AS(fit_mahalanobis_rows(two, 2, 0), failslow::invalid_argument);
  CHECK_THROWS_AS(fit_mahalanobis_rows(nullptr, 2, 1), failslow::domain_error);
  const double inf[] = {1.0, std::numeric_limits<double>::infinity()};
  CHECK_THROWS_AS(fit_mahalanobis_rows(inf, 2, 1), failslow::domain_error);
  const auto tiny = fit_mahalanobis_rows(two, 2, 1, {});  // two workers, one feature
  CHECK(tiny.dof() == 1);
  CHECK(tiny.squared_distance(two) == Approx(tiny.squared_distance(two + 1)));
}
