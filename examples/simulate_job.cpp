// Simulates a small hybrid-parallel job with a degraded data-parallel link, prints the truth
// and the DP reduce-scatter durations of one step (the degraded group's are longer), and
// writes rank 0 as a Kineto trace a profiler viewer (or failslow inspect) opens.
#include <failslow/sim/kineto_writer.hpp>
#include <failslow/sim/simulator.hpp>
#include <fstream>
#include <iostream>

int main() {
  using namespace failslow::sim;
  job_config cfg;
  cfg.sizes = failslow::parallel_sizes{};
  cfg.sizes.tp = 2;
  cfg.sizes.pp = 2;
  cfg.sizes.dp = 4;
  cfg.steps = 8;
  cfg.seed = 42;
  const simulated_job job = simulate(cfg, scenario::dp_link);
  for (const auto& f : job.truth.faults) std::cout << "fault: " << f.description << '\n';
  const std::int64_t step = job.truth.last_step;
  for (const auto& rank : job.ranks) {
    std::cout << "rank " << rank.rank << " (" << job.topo.group_name(rank.rank, failslow::parallel_dim::dp)
              << ") reduce-scatter us:";
    for (const auto& k : rank.kernels)
      if (k.step == step && k.role == kernel_role::nccl_reduce_scatter) std::cout << ' ' << k.duration_ns() / 1000;
    std::cout << '\n';
  }
  std::ofstream("rank_0.json") << kineto_trace(job, 0);
  std::cout << "wrote rank_0.json\n";
}
