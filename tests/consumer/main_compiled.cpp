// Uses failslow's separately compiled mode (failslow::compiled, FAILSLOW_SEPARATE_COMPILATION):
// the headers below are declarations only, and everything called -- the Eigen templates declared
// extern, the simulator, the job model, the diagnosis -- comes from the library. Exits non-zero
// when anything is off.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <failslow/detect/ewma_design.hpp>
#include <failslow/detect/mahalanobis.hpp>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/job_model.hpp>
#include <failslow/sim/summaries.hpp>
#include <iostream>
#include <utility>

int main() {
#ifndef FAILSLOW_SEPARATE_COMPILATION
  std::cout << "FAILSLOW_SEPARATE_COMPILATION is not defined by failslow::compiled\n";
  return 1;
#else
  namespace fd = failslow::detect;
  Eigen::MatrixXd x(40, 3);
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      x(i, j) = std::sin(0.7 * static_cast<double>(i) + 1.3 * static_cast<double>(j)) + 0.1 * static_cast<double>(j);
  x(17, 1) += 25.0;  // one worker far from the others
  const fd::outlier_report r = fd::detect_outlier_workers(x);
  const bool ok = r.outliers.size() == 1 && r.outliers[0] == 17 &&
                  std::abs(fd::chi2_quantile(2.0, 0.5) - 2.0 * std::log(2.0)) < 1e-12 &&
                  std::abs(fd::ewma_limit_for_arl(1.0, 370.398) - 3.0) < 1e-4;

  // A simulated job with a compute straggler, diagnosed in process from its window summaries.
  failslow::sim::job_config cfg;
  cfg.sizes.tp = 2;
  cfg.sizes.pp = 2;
  cfg.sizes.dp = 4;
  cfg.steps = 12;
  cfg.seed = 7;
  failslow::diagnose::model_options keep;
  keep.keep_windows = true;
  failslow::diagnose::job_model_builder model(keep);
  const auto run = failslow::sim::simulate_summaries(
      cfg, failslow::sim::scenario::compute_straggler, failslow::sim::scenario_options{},
      [&](failslow::compress::window_summary&& w) { model.add_window(std::move(w), failslow::sim::kernel_key_name); });
  const auto report = failslow::diagnose::diagnose(model.finish(), run.topo);
  const auto culprits = run.truth.faulty_ranks();
  bool named = false;
  for (const auto& f : report.findings)
    for (int r : f.ranks) named = named || std::find(culprits.begin(), culprits.end(), r) != culprits.end();
  std::cout << "failslow::compiled: " << (ok ? "ok" : "FAILED") << ", diagnosis "
            << (named ? "names the faulty rank" : "MISSED the faulty rank") << '\n';
  return ok && named ? 0 : 1;
#endif
}
