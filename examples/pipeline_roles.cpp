// Roles under a guessed layout (diagnose/roles.hpp): a tp 2 x pp 4 x dp 4 job's window
// summaries -- what an always-on collector writes, with no process groups in them -- diagnosed
// without its layout. infer_roles tells the pipeline's first, middle and last stages apart by
// the kernels they run, and the diagnosis compares each rank only within its role: the last
// stage (which idles more, and differently, every step) is not called slow, while the rank
// that did slow down is found.
//   ./example_pipeline_roles
#include <cstdio>
#include <failslow/diagnose/detail/rank_list.hpp>  // "0-3, 8" lists of ranks
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/roles.hpp>
#include <failslow/sim/summaries.hpp>

int main() {
  using namespace failslow;
  sim::job_config cfg;
  sim::calibrate(cfg);  // the host-paced job calibrated on real traces
  cfg.sizes = parse_parallel_sizes("tp=2,pp=4,dp=4");
  cfg.steps = 24;
  cfg.seed = 7;
  sim::scenario_options so;
  so.fault_rank = 5;  // a compute straggler in the first stage, from step 108
  so.onset = 8;
  diagnose::model_options mo;
  mo.keep_windows = true;  // the per-step kernel summaries roles are read from
  diagnose::job_model_builder builder(mo);
  const auto run =
      sim::simulate_summaries(cfg, sim::scenario::compute_straggler, so, [&](compress::window_summary&& w) {
        builder.add_window(std::move(w), [](name_id k) { return sim::kernel_key_name(k); });
      });
  const auto model = builder.finish();

  const auto roles = diagnose::infer_roles(model);
  std::printf("%zu roles among %d ranks:\n", roles.count(), model.world_size);
  for (std::size_t i = 0; i < roles.count(); ++i)
    std::printf("  role %zu: ranks %s, %zu work kernels\n", i, diagnose::detail::rank_list(roles.members[i]).c_str(),
                roles.kernels[i]);

  // The layout as a tool that knows none must take it: one data-parallel group of every rank.
  const topology assumed(parallel_sizes{1, 1, 1, model.world_size, 1});
  diagnose::diagnose_options o;
  o.layout_assumed = true;
  const auto rep = diagnose::diagnose(model, assumed, o);
  std::printf("truth: %s\n", run.truth.faults.front().description.c_str());
  for (const auto& f : rep.findings) std::printf("%s %s: %s\n", f.level.c_str(), f.kind.c_str(), f.summary.c_str());
}
