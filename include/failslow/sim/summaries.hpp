// failslow/sim/summaries.hpp -- scale mode: the simulator's timing model emitting per-rank
// window summaries directly, instead of timelines, for jobs of 1,024 to 2^20 ranks.
//
// Synopsis
//   summary_run simulate_summaries(cfg, faults, sink, name, severity, options)
//   summary_run simulate_summaries(cfg, scenario, scenario_options, sink, options)
//   summary_run collect_summaries(cfg, scenario, scenario_options, options)   windows kept
//   The same engine as simulate() (simulator.hpp): same program, fault semantics and
//   counter-based randomness, so the kernels are exactly those of the job's timelines. Each
//   rank's GPU kernels (compute and collectives, in start order) go straight into that rank's
//   compress::window_compressor, one window per step: once every rank has finished step k,
//   the windows of ranks 0, 1, ..., world - 1 are closed and handed to `sink`, then step k + 1
//   runs. The sink thus sees world x steps windows, step by step, ranks ascending. Of the host
//   calls, the kernel launches give each window's launch pace (window_summary::launch: their
//   count and the median time between consecutive ones); the rest, and annotations, are not
//   kept.
//   A window: rank; window_id = its ProfilerStep number; start/end = first kernel start and
//   last kernel end on the rank's own clock (true time + clock offset + options.epoch_ns, as
//   the Kineto writer's timestamps); per kernel key the exact count and total and the
//   duration clusters (window_summary.hpp).
//   Keys: kernel_key(role) numbers the distinct kernel names of the catalogue densely, in
//   catalogue order (kernel_key_count() of them; roles that share a name, NCCL all-to-all and
//   send/receive, share the key, as they would in a trace); kernel_key_name(id) is the name,
//   what the codec's summary_encoder asks for.
//   summary_run: the config, topology and truth (as simulate() gives them), the windows and
//   kernels handed over, and for collect_summaries the windows themselves (small jobs, tests).
// Memory does not grow with steps: per rank a compressor (its buffers hold one step's
//   durations) and the model's state, per pipeline stage one program. Measured on the default
//   model (tp 8 x pp 8 x dp 256 = 16,384 ranks, ~300 kernels per rank and step): 13 MB peak
//   for the model alone, 104 MB with the compressors, the same for 3 or 6 steps.
// Complexity: the simulator's time plus one window close per rank and step.
// Errors: those of simulate() (job.hpp, scenario.hpp, simulator.hpp); invalid_argument for an
//   empty sink, a compressor configuration the compressor rejects, compressor.max_window_ns
//   != 0 (the windows are the steps) or epoch_ns < 0; kernel_key_name of an id >=
//   kernel_key_count() throws domain_error. Exceptions of the sink propagate (the run stops).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/compress/window_compressor.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/sim/kernels.hpp"
#include "failslow/sim/simulator.hpp"

namespace failslow::sim {

/// Key of a kernel role's name in the summaries (dense, catalogue order).
FAILSLOW_FUNC name_id kernel_key(kernel_role role);

/// Number of distinct kernel names, i.e. of keys.
FAILSLOW_FUNC std::size_t kernel_key_count();

/// The kernel name of a key.
FAILSLOW_INLINE std::string_view kernel_key_name(name_id key);

struct summary_options {
  compress::compressor_config compressor{};  ///< per rank; max_window_ns must stay 0
  std::int64_t epoch_ns = 4000000000000000;  ///< added to each rank's clock (the Kineto writer's default)
};

using summary_sink = std::function<void(compress::window_summary&&)>;

struct summary_run {
  job_config config;
  topology topo;
  sim::truth truth;
  std::uint64_t windows = 0;                        ///< handed to the sink: world x steps
  std::uint64_t kernels = 0;                        ///< kernel events compressed
  std::vector<compress::window_summary> summaries;  ///< collect_summaries only
};

/// Runs the job with the given faults and hands each rank's window of each step to `sink`
/// (see the synopsis); `name` and `severity` are recorded in the truth.
FAILSLOW_FUNC summary_run simulate_summaries(const job_config& cfg, std::vector<fault> faults, const summary_sink& sink,
                                             std::string name = "custom", double severity = 1.0,
                                             const summary_options& options = {});

/// Places the faults of scenario `s` (plan_faults) and runs the job into `sink`.
FAILSLOW_FUNC summary_run simulate_summaries(const job_config& cfg, scenario s, const scenario_options& scenario_opt,
                                             const summary_sink& sink, const summary_options& options = {});

/// simulate_summaries keeping the windows in summary_run::summaries (step by step, ranks
/// ascending): for jobs small enough to hold them.
FAILSLOW_FUNC summary_run collect_summaries(const job_config& cfg, scenario s,
                                            const scenario_options& scenario_opt = {},
                                            const summary_options& options = {});

}  // namespace failslow::sim

#if FAILSLOW_HEADER_ONLY
#include "failslow/sim/impl/summaries.ipp"
#endif
