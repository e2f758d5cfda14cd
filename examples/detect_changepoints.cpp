// ARGUS L1's full scan: when did the step time shift, and to what? PELT and binary segmentation
// offline, Page's CUSUM online.
//   ./example_detect_changepoints
#include <failslow/detect/binseg.hpp>
#include <failslow/detect/cusum.hpp>
#include <failslow/detect/pelt.hpp>
#include <iostream>
#include <random>
#include <vector>

int main() {
  using namespace failslow::detect;
  // 1000 steps: 500 ms, then a GPU throttles at step 400 (+6 %), recovers partly at step 700.
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 5.0);
  std::vector<double> step_ms;
  for (int s = 0; s < 1000; ++s) step_ms.push_back((s < 400 ? 500.0 : s < 700 ? 530.0 : 515.0) + noise(rng));

  changepoint_options o;  // Gaussian mean change, MBIC penalty, noise sd estimated
  const auto found = pelt(step_ms, o);
  std::cout << "PELT: " << found.changes.size() << " change points (sigma " << found.sigma << " ms)\n";
  for (const auto& s : found.segments)
    std::cout << "  steps " << s.begin << ".." << s.end - 1 << ": mean " << s.mean << " ms\n";
  const auto greedy = binary_segmentation(step_ms, o);
  std::cout << "binary segmentation: " << greedy.changes.size() << " change points, " << greedy.cost_evaluations
            << " cost evaluations (PELT " << found.cost_evaluations << ")\n";

  // Online: learn the baseline from the first 50 steps, then watch for shifts of ~1 sigma.
  cusum_options c;
  c.baseline.warmup = 50;
  c.h = 8.0;  // in-control ARL ~ 2 x 10^4 steps per side
  cusum<double> chart(c);
  bool reported = false;
  for (double t : step_ms) {
    const auto p = chart.update(t);
    if (p.state == chart_state::alarm && !reported) {
      std::cout << "CUSUM alarm at step " << p.index << " (" << (p.direction > 0 ? "slower" : "faster")
                << "), shift estimated to start at step " << p.change_start << '\n';
      reported = true;  // a persisting shift re-alarms after each restart: report the first
    }
  }
  std::cout << "CUSUM alarms in total: " << chart.alarms() << '\n';
}
