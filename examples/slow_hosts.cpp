// Slow hosts (L4, diagnose/l4_slow_host.hpp): a rank whose host launches its kernels slower
// than its peers' hosts while its GPU still has queued work, so that no step time, idle or wait
// shows it yet. Simulates a GPU-bound job (the host runs far ahead of its GPU) in which one
// rank's host gets 10x slower per launch from step 6, reads its Kineto traces back, measures each
// rank's launch pace and prints the hosts found, with the GPU idle that shows the margin left.
//   ./example_slow_hosts
#include <cstdio>
#include <failslow/diagnose/job_model.hpp>
#include <failslow/diagnose/l4_host.hpp>
#include <failslow/diagnose/l4_slow_host.hpp>
#include <failslow/io/kineto_reader.hpp>
#include <failslow/sim/kineto_writer.hpp>
#include <failslow/sim/simulator.hpp>
#include <string>

int main() {
  using namespace failslow;
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=2,pp=2,dp=4");
  cfg.steps = 16;
  cfg.seed = 5;
  sim::scenario_options so;
  so.onset = 6;
  so.severity = 0.25;  // a quarter of the scenario's 40x: about 10x per launch
  const auto job = sim::simulate(cfg, sim::scenario::host_launch_delay, so);
  trace::trace_set set;  // the traces as a profiler would have written them, read back
  io::kineto_reader reader;
  for (int r = 0; r < job.topo.world_size(); ++r) {
    trace::rank_trace t;
    t.rank = r;
    t.data = reader.read_buffer(sim::kineto_trace(job, r), set.names, {}, "rank_" + std::to_string(r) + ".json");
    set.traces.push_back(std::move(t));
  }
  auto model = diagnose::build_job_model(set);
  diagnose::measure_host_activity(model, set);  // per rank and step: the launch pace
  const auto found = diagnose::find_slow_hosts(model, job.topo);
  std::printf("%s (%s), %zu tests:\n", std::string(sim::to_string(sim::scenario::host_launch_delay)).c_str(),
              job.truth.faults.front().description.c_str(), found.tests);
  for (const auto& h : found.hosts)
    std::printf(
        "  rank %d from step %lld: a launch every %.1f us vs %.1f us on its %zu peers (%.1fx, q %.2g); "
        "GPU idle %.2f ms per step vs %.2f ms\n",
        h.rank, static_cast<long long>(model.steps[h.first]), h.launch_interval_ns / 1e3,
        h.peer_launch_interval_ns / 1e3, h.peers.size(), h.ratio, h.q_value, h.gpu_idle_ns / 1e6,
        h.peer_gpu_idle_ns / 1e6);
  if (found.hosts.empty()) std::printf("  none\n");
}
