// The host side of L4 (diagnose/l4_host.hpp, diagnose/l4_slow_host.hpp): steps in which a rank's
// GPU sat idle because its host stopped launching, and hosts that launch slower than their peers'.
// Simulates three small jobs in memory -- a JIT-compile stall on one rank, garbage-collection
// pauses every 4 steps on changing ranks, and a GPU-bound job in which one rank's host gets 10x
// slower per launch from step 6 (its GPU still has queued work, so no step time shows it) --
// reads their Kineto traces back, measures each rank's launch gaps and pace, and prints the
// stalls found (cause, period) and the slow hosts (pace against their peers', the GPU's idle).
// The slow host is then found again from the same job's per-step window summaries (the always-on
// path: each window keeps its host's launch count and median interval, window_summary::launch).
//   ./example_host_stalls
#include <cstdio>
#include <failslow/diagnose/job_model.hpp>
#include <failslow/diagnose/l4_host.hpp>
#include <failslow/diagnose/l4_slow_host.hpp>
#include <failslow/io/kineto_reader.hpp>
#include <failslow/sim/kineto_writer.hpp>
#include <failslow/sim/simulator.hpp>
#include <failslow/sim/summaries.hpp>
#include <string>

int main() {
  using namespace failslow;
  for (const auto scenario : {sim::scenario::jit_stall, sim::scenario::gc_pauses, sim::scenario::host_launch_delay}) {
    sim::job_config cfg;
    cfg.sizes =
        parse_parallel_sizes(scenario == sim::scenario::host_launch_delay ? "tp=2,pp=2,dp=4" : "tp=2,pp=2,dp=2");
    cfg.steps = 16;
    cfg.seed = 5;
    sim::scenario_options so;
    if (scenario == sim::scenario::host_launch_delay) {
      so.onset = 6;
      so.severity = 0.25;  // a quarter of the scenario's 40x: about 10x per launch
    }
    const auto job = sim::simulate(cfg, scenario, so);
    trace::trace_set set;  // the traces as a profiler would have written them, read back
    io::kineto_reader reader;
    for (int r = 0; r < job.topo.world_size(); ++r) {
      trace::rank_trace t;
      t.rank = r;
      t.data = reader.read_buffer(sim::kineto_trace(job, r), set.names, {}, "rank_" + std::to_string(r) + ".json");
      set.traces.push_back(std::move(t));
    }
    auto model = diagnose::build_job_model(set);
    diagnose::measure_host_activity(model, set);  // launch gaps and pace, host operators, new kernels
    std::printf("%s (%s):\n", std::string(sim::to_string(scenario)).c_str(),
                job.truth.faults.front().description.c_str());
    for (const auto& s : diagnose::find_host_stalls(model).stalls) {
      std::printf("  %s on %zu rank(s), %zu step(s) from %lld, GPU idle %.1f ms each, host busy %.0f %%",
                  diagnose::to_string(s.cause), s.ranks.size(), s.steps.size(), static_cast<long long>(s.steps.front()),
                  s.gpu_idle_ns / 1e6, 100 * s.cpu_busy_fraction);
      if (s.period_steps > 0) std::printf(", every %lld steps", static_cast<long long>(s.period_steps));
      if (!s.top_ops.empty()) std::printf(", host ran %s", s.top_ops.front().first.c_str());
      if (!s.new_kernels.empty()) std::printf(", %zu new kernel(s)", s.new_kernels.size());
      std::printf("\n");
    }
    for (const auto& h : diagnose::find_slow_hosts(model, job.topo).hosts)
      std::printf(
          "  slow host: rank %d from step %lld, a launch every %.1f us vs %.1f us on its %zu peers (%.1fx, "
          "q %.2g); GPU idle %.2f ms per step vs %.2f ms\n",
          h.rank, static_cast<long long>(model.steps[h.first]), h.launch_interval_ns / 1e3,
          h.peer_launch_interval_ns / 1e3, h.peers.size(), h.ratio, h.q_value, h.gpu_idle_ns / 1e6,
          h.peer_gpu_idle_ns / 1e6);
    if (scenario != sim::scenario::host_launch_delay) continue;
    diagnose::job_model_builder summaries;  // the same job, as window summaries
    sim::simulate_summaries(cfg, scenario, so, [&](compress::window_summary&& w) {
      summaries.add_window(std::move(w), sim::kernel_key_name);
    });
    const auto from_summaries = summaries.finish();
    for (const auto& h : diagnose::find_slow_hosts(from_summaries, job.topo).hosts)
      std::printf("  from the summaries: rank %d from step %lld, %.1f us between launches vs %.1f us (%.1fx)\n", h.rank,
                  static_cast<long long>(from_summaries.steps[h.first]), h.launch_interval_ns / 1e3,
                  h.peer_launch_interval_ns / 1e3, h.ratio);
  }
}
