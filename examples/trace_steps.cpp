// Load a job's traces, map each ProfilerStep to its GPU work, align the ranks' clocks and
// compare the host-side call trees of one step across ranks.
//   ./example_trace_steps ../shared/data/kineto/trace_filter_2_of_128
//   ./example_trace_steps tests/data/torch_gloo/no_schedule     (no ProfilerStep#N: optimizer steps)
#include <failslow/trace/clock_align.hpp>
#include <failslow/trace/load_trace_set.hpp>
#include <failslow/trace/simhash.hpp>
#include <failslow/trace/steps.hpp>
#include <failslow/trace/tree.hpp>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: example_trace_steps TRACE...|DIR\n";
    return 2;
  }
  failslow::trace::trace_set_options options;
  options.threads = 2;  // files read in parallel; no pool survives the call
  auto set = failslow::trace::load_trace_set(std::vector<std::string>(argv + 1, argv + argc), options);
  std::cout << set.traces.size() << " traces, world size " << set.world_size << "\n";

  for (const auto& t : set.traces) {
    const auto steps = failslow::trace::map_steps(t.data, set.names);
    if (!steps.inferred_from.empty())  // profiled without prof.step(): iterations between optimizer steps
      std::cout << "rank " << t.rank << ": no ProfilerStep#N, steps cut at " << steps.inferred_from << "\n";
    for (const auto& s : steps.steps)
      std::cout << "rank " << t.rank << " step " << s.number << ": CPU " << (s.cpu_end_ns - s.cpu_start_ns) / 1000
                << " us, GPU busy " << s.gpu_busy_ns / 1000 << " us in " << s.device_events << " activities\n";
  }

  const auto clocks = failslow::trace::estimate_clock_offsets(set);
  for (const auto& c : clocks.traces)
    std::cout << "rank " << c.rank << " clock offset " << c.offset_ns << " ns (" << c.instances << " collectives)\n";
  failslow::trace::apply_clock_offsets(set, clocks);

  // The host tree of the first step on the first two ranks: what differs?
  if (set.traces.size() < 2) return 0;
  std::vector<failslow::trace::scoped_tree> trees[2];
  std::uint32_t step_node[2] = {0, 0};
  std::size_t which[2] = {0, 0};
  for (int side = 0; side < 2; ++side) {
    const auto& d = set.traces[static_cast<std::size_t>(side)].data;
    const auto steps = failslow::trace::map_steps(d, set.names);
    if (steps.steps.empty()) return 0;
    const std::string name = "ProfilerStep#" + std::to_string(steps.steps.front().number);
    trees[side] = failslow::trace::build_trees(d);
    for (std::size_t k = 0; k < trees[side].size(); ++k) {
      const auto found = failslow::trace::find_named(trees[side][k].tree, d.events, set.names, name);
      if (!found.empty()) {
        which[side] = k;
        step_node[side] = found.front();
      }
    }
  }
  const failslow::trace::tree_ref a{trees[0][which[0]].tree, set.traces[0].data.events, set.names};
  const failslow::trace::tree_ref b{trees[1][which[1]].tree, set.traces[1].data.events, set.names};
  const auto cmp = failslow::trace::compare_subtrees(a, step_node[0], b, step_node[1]);
  std::cout << "step tree similarity " << cmp.similarity << ", " << cmp.differences.size() << " differing subtrees\n";
  for (std::size_t i = 0; i < cmp.differences.size() && i < 5; ++i) {
    const auto& d = cmp.differences[i];
    const bool in_a = d.what == failslow::trace::tree_difference::kind::only_in_a;
    const auto& side = in_a ? a : b;
    std::cout << "  only on rank " << set.traces[in_a ? 0 : 1].rank << ": "
              << set.names.name(side.events[side.tree[d.node].event].name) << "\n";
  }
}
