// KAT intra-worker: one EWMA chart per kernel, with limits designed for an in-control ARL of 500
// and a trend rule, watching a slow drift (a GPU losing clock speed as it heats up).
//   ./example_detect_ewma
#include <failslow/detect/ewma.hpp>
#include <failslow/detect/ewma_design.hpp>
#include <iostream>
#include <random>

int main() {
  using namespace failslow::detect;
  ewma_options o;
  o.lambda = 0.2;
  o.L = ewma_limit_for_arl(o.lambda, 500.0);  // in-control ARL 500: L = 2.962 (Lucas & Saccucci)
  o.side = chart_side::upper;                 // only slowdowns matter
  o.baseline.mode = baseline_mode::warmup_robust;
  o.baseline.warmup = 100;  // median / MAD of the first 100 launches
  o.trend_run = 5;          // 5 rises in a row of z: trend warning
  o.trend_on = trend_source::statistic;
  ewma_chart<double> chart(o);
  std::cout << "L = " << o.L << ", ARL after a 1-sigma shift = " << ewma_arl(o.lambda, o.L, 1.0) << " launches\n";

  std::mt19937_64 rng(9);
  std::normal_distribution<double> noise(0.0, 2.0);
  bool warned = false;
  for (int i = 0; i < 600; ++i) {
    const double drift = i < 200 ? 0.0 : 0.04 * (i - 200);    // +0.04 us per launch after launch 200
    const auto p = chart.update(250.0 + drift + noise(rng));  // a 250 us GEMM
    if (p.state == chart_state::trend_warning && !warned && i >= 200) {
      std::cout << "launch " << p.index << ": trend warning (z = " << p.z << ", UCL " << p.ucl << ")\n";
      warned = true;
    }
    if (p.state == chart_state::alarm) {
      std::cout << "launch " << p.index << ": alarm, z = " << p.z << " > UCL " << p.ucl << '\n';
      break;
    }
  }
}
