// Draw what a straggler looks like: a 1,024-rank job (tp 8 x pp 8 x dp 16) simulated straight
// into per-step window summaries with one slow GPU, its compute time per rank and step as an
// SVG heatmap (io/svg_heatmap.hpp). The slow rank is a bright stripe from the step it slowed
// down; white lines separate the pipeline stages. Open the file in any browser.
//   ./example_svg_heatmap [OUT.svg]      (default: compute_heatmap.svg)
#include <cstdio>
#include <failslow/diagnose/job_model.hpp>
#include <failslow/io/svg_heatmap.hpp>
#include <failslow/sim/summaries.hpp>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace failslow;
  const std::string out = argc > 1 ? argv[1] : "compute_heatmap.svg";
  sim::job_config cfg;
  cfg.sizes.tp = 8;
  cfg.sizes.pp = 8;
  cfg.sizes.dp = 16;
  cfg.steps = 8;
  cfg.seed = 5;
  sim::scenario_options fault;
  fault.onset = 3;  // the GPU slows down from the fourth step

  // The windows go into a job model: rank x phase x step times.
  diagnose::job_model_builder model;
  const auto run =
      sim::simulate_summaries(cfg, sim::scenario::compute_straggler, fault,
                              [&](compress::window_summary&& w) {
                                model.add_window(std::move(w), [](name_id key) { return sim::kernel_key_name(key); });
                              },
                              {});
  const auto m = model.finish();

  const std::size_t ranks = m.rank_count(), steps = m.step_count();
  std::vector<double> compute(ranks * steps);
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t s = 0; s < steps; ++s) compute[r * steps + s] = m.phase_ns(r, diagnose::compute_phase, s);

  io::heatmap_options o;
  o.title = "Compute time per step, rank x step";
  o.value_name = "compute time per step";
  o.col_labels = m.steps;  // ProfilerStep numbers
  for (const auto& f : run.truth.faults) o.marked_rows.insert(o.marked_rows.end(), f.ranks.begin(), f.ranks.end());
  o.marked_note = "the injected straggler";
  const int stage = run.topo.world_size() / cfg.sizes.pp;  // stages are contiguous in the default order
  for (int s = 1; s < cfg.sizes.pp; ++s) o.row_separators.push_back(static_cast<std::size_t>(s * stage));

  std::ofstream file(out, std::ios::binary);
  file << io::heatmap_svg(compute, ranks, steps, o);
  if (!file) {
    std::fprintf(stderr, "cannot write %s\n", out.c_str());
    return 1;
  }
  std::printf("wrote %s: %zu ranks x %zu steps of compute time\n", out.c_str(), ranks, steps);
  for (const auto& f : run.truth.faults) std::printf("truth: %s\n", f.description.c_str());
}
