// ARGUS L1: which training steps were slow? A sliding-window ratio gate over iteration times.
//   ./example_detect_ratio_gate
#include <cmath>
#include <failslow/detect/ratio_gate.hpp>
#include <iostream>
#include <random>
#include <vector>

int main() {
  // 300 steps of ~820 ms with 1 % jitter; steps 120-124 hit a slow NCCL ring (x1.6), step 200 a
  // checkpoint write (x2.5).
  std::mt19937_64 rng(1);
  std::normal_distribution<double> jitter(0.0, 0.01);
  std::vector<double> step_ms(300);
  for (double& t : step_ms) t = 820.0 * std::exp(jitter(rng));
  for (int s = 120; s < 125; ++s) step_ms[s] *= 1.6;
  step_ms[200] *= 2.5;

  failslow::detect::ratio_gate_options o;
  o.window = 20;            // baseline: median of the previous 20 steps
  o.open_threshold = 1.2;   // open at 20 % slower
  o.close_threshold = 1.1;  // close below 10 % slower (hysteresis)
  failslow::detect::ratio_gate<double> gate(o);
  for (double t : step_ms) {
    const auto p = gate.update(t);  // streaming: one call per step
    if (p.event == failslow::detect::gate_event::closed)
      std::cout << "slow steps " << p.window.first << ".." << p.window.last << ", peak x" << p.window.peak_ratio
                << " at step " << p.window.peak_index << '\n';
  }
  // The same in one call on a recorded series:
  const auto all = failslow::detect::ratio_gate_scan(step_ms, o);
  std::cout << all.windows.size() << " slow windows\n";
}
