// Scale mode: simulates a 1,024-rank job (tp 8 x pp 8 x dp 16) with a compute straggler as
// per-rank window summaries (no timelines are kept), finds the rank whose compute time in the
// last step stands furthest above its data-parallel group's median, and prints the truth.
#include <algorithm>
#include <cstdio>
#include <failslow/sim/summaries.hpp>
#include <vector>

int main() {
  using namespace failslow::sim;
  job_config cfg;
  cfg.sizes.tp = 8;
  cfg.sizes.pp = 8;
  cfg.sizes.dp = 16;
  cfg.steps = 3;
  cfg.seed = 5;
  // Which keys are collectives (their time is mostly waiting for the slowest peer).
  std::vector<bool> collective(kernel_key_count());
  for (std::size_t i = 0; i < kernel_role_count; ++i) {
    const auto role = static_cast<kernel_role>(i);
    collective[kernel_key(role)] = spec_of(role).is_collective();
  }

  const auto last = static_cast<std::uint64_t>(cfg.first_step + cfg.steps - 1);
  std::vector<double> compute_ns(static_cast<std::size_t>(validate(cfg).world_size()));
  const summary_run run = simulate_summaries(cfg, scenario::compute_straggler, scenario_options{},
                                             [&](failslow::compress::window_summary&& w) {
                                               if (w.window_id != last) return;  // keep only the last step
                                               for (const auto& k : w.kernels)
                                                 if (!collective[k.key])
                                                   compute_ns[static_cast<std::size_t>(w.rank)] += k.total_ns;
                                             });
  int worst = 0;
  double worst_ratio = 0;
  for (int r = 0; r < run.topo.world_size(); ++r) {
    std::vector<double> group;
    for (int p : run.topo.group(r, failslow::parallel_dim::dp))
      group.push_back(compute_ns[static_cast<std::size_t>(p)]);
    std::nth_element(group.begin(), group.begin() + group.size() / 2, group.end());
    const double ratio = compute_ns[static_cast<std::size_t>(r)] / group[group.size() / 2];
    if (ratio > worst_ratio) {
      worst = r;
      worst_ratio = ratio;
    }
  }
  std::printf("%llu windows of %llu kernels from %d ranks\n", static_cast<unsigned long long>(run.windows),
              static_cast<unsigned long long>(run.kernels), run.topo.world_size());
  std::printf("slowest compute in step %llu: rank %d at %.2fx its dp group's median\n",
              static_cast<unsigned long long>(last), worst, worst_ratio);
  for (const auto& f : run.truth.faults) std::printf("truth: %s\n", f.description.c_str());
}
